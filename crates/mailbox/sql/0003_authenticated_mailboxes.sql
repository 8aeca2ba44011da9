-- Authenticated mailboxes and least privilege on the bus.
--
-- Every participant is its own database role. Who sent a message is the session's role, written
-- by mq.send itself, never a field the client fills in. Every operation is a SECURITY DEFINER
-- function that checks the caller's right to it, and PUBLIC may call none of them:
--
--   owner of a mailbox   claim, ack, nack and dead-letter the messages of that mailbox only
--   any participant      send (to any mailbox), mailbox statistics, who owns a mailbox
--   auditor              read every message (SELECT on the three tables), take the audit
--                        horizon, record the audit watermark
--   operator             send, redrive dead letters, purge what the audit has scanned
--
-- A superuser may do everything (it can anyway). mq.grant_participant() gives a role its part;
-- `maskbus bus grant` calls it, and a DBA can call it by hand.

-- Which role owns which mailbox: only the owner claims from it.
CREATE TABLE mq.mailboxes (
    mailbox text PRIMARY KEY,
    owner   name NOT NULL
);

-- The duties beyond owning a mailbox.
CREATE TABLE mq.duties (
    role name NOT NULL,
    duty text NOT NULL CHECK (duty IN ('auditor', 'operator')),
    PRIMARY KEY (role, duty)
);

CREATE FUNCTION mq.caller_is_superuser() RETURNS boolean LANGUAGE sql STABLE
    SET search_path = pg_catalog
    AS $$ SELECT coalesce((SELECT rolsuper FROM pg_roles WHERE rolname = session_user), false) $$;

CREATE FUNCTION mq.caller_owns(p_mailbox text) RETURNS boolean LANGUAGE sql STABLE
    SET search_path = pg_catalog
    AS $$ SELECT mq.caller_is_superuser()
              OR EXISTS (SELECT 1 FROM mq.mailboxes WHERE mailbox = p_mailbox AND owner = session_user) $$;

CREATE FUNCTION mq.caller_has(p_duty text) RETURNS boolean LANGUAGE sql STABLE
    SET search_path = pg_catalog
    AS $$ SELECT mq.caller_is_superuser()
              OR EXISTS (SELECT 1 FROM mq.duties WHERE role = session_user AND duty = p_duty) $$;

CREATE FUNCTION mq.caller_participates() RETURNS boolean LANGUAGE sql STABLE
    SET search_path = pg_catalog
    AS $$ SELECT mq.caller_is_superuser()
              OR EXISTS (SELECT 1 FROM mq.mailboxes WHERE owner = session_user)
              OR EXISTS (SELECT 1 FROM mq.duties WHERE role = session_user) $$;

CREATE FUNCTION mq.refuse(p_what text) RETURNS void LANGUAGE plpgsql
    SET search_path = pg_catalog
    AS $$ BEGIN RAISE EXCEPTION USING ERRCODE = '42501', MESSAGE = 'permission denied on the bus: ' || p_what; END $$;

-- The role that owns a mailbox, or NULL: the consumer trusts replies from its producer's owner.
CREATE FUNCTION mq.mailbox_owner(p_mailbox text) RETURNS name LANGUAGE sql STABLE
    SECURITY DEFINER SET search_path = pg_catalog
    AS $$ SELECT owner FROM mq.mailboxes WHERE mailbox = p_mailbox $$;

-- Sending: the sender is the session's role.
DROP FUNCTION mq.send(text, text, text, text[], text, jsonb[]);
CREATE FUNCTION mq.send(
    p_mailbox text, p_kind text, p_correlation_ids text[], p_reply_to text, p_bodies jsonb[]
) RETURNS SETOF bigint LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog AS $$
BEGIN
    IF NOT mq.caller_participates() THEN
        PERFORM mq.refuse(session_user || ' is not a participant of this bus (see maskbus bus grant)');
    END IF;
    PERFORM pg_advisory_xact_lock_shared(mq.audit_lock_key());
    RETURN QUERY
    INSERT INTO mq.messages (mailbox, sender, kind, correlation_id, reply_to, body)
    SELECT p_mailbox, session_user, p_kind, c, p_reply_to, b
      FROM unnest(p_bodies, p_correlation_ids) WITH ORDINALITY AS u(b, c, n)
     ORDER BY n
    RETURNING id;
    -- Delivered at commit; receivers that miss it (reconnecting) poll as a fallback.
    PERFORM pg_notify('mq_messages', p_mailbox);
END $$;

-- Claiming: only from a mailbox the caller owns. Bodies travel as text with their size, so a
-- receiver can refuse one by size, or dead-letter one it cannot parse, without ever failing.
DROP FUNCTION mq.claim(text, integer, double precision, integer);
CREATE FUNCTION mq.claim(p_mailbox text, p_limit integer, p_lease_seconds double precision, p_max_attempts integer)
RETURNS TABLE (id bigint, mailbox text, sender text, kind text, correlation_id text, reply_to text,
               body text, body_bytes integer, attempts integer, lease bigint)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog AS $$
BEGIN
    IF NOT mq.caller_owns(p_mailbox) THEN
        PERFORM mq.refuse('mailbox ' || left(p_mailbox, 64) || ' is not owned by ' || session_user);
    END IF;
    RETURN QUERY
    WITH next AS (
        SELECT m.id, m.attempts FROM mq.messages m
         WHERE m.mailbox = p_mailbox AND m.visible_at <= now()
         ORDER BY m.visible_at, m.id
         LIMIT p_limit
         FOR UPDATE SKIP LOCKED
    ),
    exhausted AS (
        DELETE FROM mq.messages m USING next
         WHERE m.id = next.id AND next.attempts >= p_max_attempts
        RETURNING m.*
    ),
    buried AS (
        INSERT INTO mq.dead_letters (id, mailbox, sender, kind, correlation_id, reply_to, body, created_at, attempts, error)
        SELECT x.id, x.mailbox, x.sender, x.kind, x.correlation_id, x.reply_to, x.body, x.created_at, x.attempts,
               coalesce('gave up after ' || x.attempts || ' attempts; last error: ' || x.last_error,
                        'gave up after ' || x.attempts || ' attempts; the receiver never acked (lease expired)')
          FROM exhausted x
    ),
    leased AS (
        UPDATE mq.messages m
           SET visible_at = clock_timestamp() + make_interval(secs => p_lease_seconds),
               attempts   = m.attempts + 1,
               lease      = nextval('mq.lease_seq')
          FROM next
         WHERE m.id = next.id AND next.attempts < p_max_attempts
        RETURNING m.*
    )
    SELECT l.id, l.mailbox, l.sender, l.kind, l.correlation_id, l.reply_to,
           l.body::text, octet_length(l.body::text), l.attempts, l.lease
      FROM leased l;
END $$;

-- Acking: archives the messages whose lease the caller holds, in mailboxes it owns.
CREATE FUNCTION mq.ack(p_ids bigint[], p_leases bigint[]) RETURNS SETOF bigint
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog AS $$
    WITH acked AS (
        DELETE FROM mq.messages m
         USING unnest(p_ids, p_leases) AS l(id, lease)
         WHERE m.id = l.id AND m.lease = l.lease AND mq.caller_owns(m.mailbox)
     RETURNING m.*)
    INSERT INTO mq.archive (id, mailbox, sender, kind, correlation_id, reply_to, body, created_at, attempts)
    SELECT id, mailbox, sender, kind, correlation_id, reply_to, body, created_at, attempts FROM acked
    RETURNING id
$$;

-- Nacking: hides the message for a backoff and records the error. Returns rows changed.
CREATE FUNCTION mq.nack(p_id bigint, p_lease bigint, p_delay_seconds double precision, p_error text)
RETURNS integer LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog AS $$
DECLARE
    changed integer;
BEGIN
    UPDATE mq.messages
       SET visible_at = now() + make_interval(secs => p_delay_seconds), lease = NULL,
           last_error = left(p_error, 2000)
     WHERE id = p_id AND lease = p_lease AND mq.caller_owns(mailbox);
    GET DIAGNOSTICS changed = ROW_COUNT;
    RETURN changed;
END $$;

-- Dead-lettering: moves the message to the dead letters with the reason. Returns rows moved.
CREATE FUNCTION mq.dead_letter(p_id bigint, p_lease bigint, p_reason text)
RETURNS integer LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog AS $$
DECLARE
    moved integer;
BEGIN
    WITH dead AS (
        DELETE FROM mq.messages WHERE id = p_id AND lease = p_lease AND mq.caller_owns(mailbox)
        RETURNING *)
    INSERT INTO mq.dead_letters (id, mailbox, sender, kind, correlation_id, reply_to, body, created_at, attempts, error)
    SELECT id, mailbox, sender, kind, correlation_id, reply_to, body, created_at, attempts, left(p_reason, 2000)
      FROM dead;
    GET DIAGNOSTICS moved = ROW_COUNT;
    RETURN moved;
END $$;

-- Redriving the dead letters of a mailbox back to pending: the operator's.
CREATE FUNCTION mq.redrive(p_mailbox text) RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog AS $$
DECLARE
    moved bigint;
BEGIN
    IF NOT mq.caller_has('operator') THEN
        PERFORM mq.refuse('only the operator redrives dead letters');
    END IF;
    WITH back AS (DELETE FROM mq.dead_letters WHERE mailbox = p_mailbox RETURNING *),
         ins AS (
           INSERT INTO mq.messages (id, mailbox, sender, kind, correlation_id, reply_to, body, created_at, last_error)
           OVERRIDING SYSTEM VALUE
           SELECT id, mailbox, sender, kind, correlation_id, reply_to, body, created_at, error FROM back
           RETURNING 1)
    SELECT count(*) INTO moved FROM ins;
    IF moved > 0 THEN
        PERFORM pg_notify('mq_messages', p_mailbox);
    END IF;
    RETURN moved;
END $$;

-- Per mailbox counts, for any participant: numbers only, no bodies.
CREATE FUNCTION mq.stats()
RETURNS TABLE (mailbox text, pending bigint, leased bigint, delayed bigint, archived bigint, dead bigint,
               oldest_pending_secs double precision)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog AS $$
BEGIN
    IF NOT mq.caller_participates() THEN
        PERFORM mq.refuse(session_user || ' is not a participant of this bus');
    END IF;
    RETURN QUERY
    SELECT s.mailbox, sum(s.pending)::bigint, sum(s.leased)::bigint, sum(s.delayed)::bigint,
           sum(s.archived)::bigint, sum(s.dead)::bigint, max(s.oldest)::float8
      FROM (SELECT m.mailbox,
                   count(*) FILTER (WHERE m.visible_at <= now()) AS pending,
                   count(*) FILTER (WHERE m.visible_at > now() AND m.lease IS NOT NULL) AS leased,
                   count(*) FILTER (WHERE m.visible_at > now() AND m.lease IS NULL) AS delayed,
                   0 AS archived, 0 AS dead,
                   extract(epoch FROM now() - min(m.created_at) FILTER (WHERE m.visible_at <= now())) AS oldest
              FROM mq.messages m GROUP BY m.mailbox
            UNION ALL
            SELECT a.mailbox, 0, 0, 0, count(*), 0, NULL FROM mq.archive a GROUP BY a.mailbox
            UNION ALL
            SELECT d.mailbox, 0, 0, 0, 0, count(*), NULL FROM mq.dead_letters d GROUP BY d.mailbox) s
     GROUP BY s.mailbox ORDER BY s.mailbox;
END $$;

-- Purging what the audit has scanned: the operator's. Pending and leased messages are never
-- purged; dead letters only when asked.
CREATE FUNCTION mq.purge(p_older_than_seconds double precision, p_dead_letters boolean)
RETURNS TABLE (deleted_archived bigint, deleted_dead bigint, kept_unaudited bigint,
               kept_in_flight bigint, kept_dead bigint, audited_through bigint)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog AS $$
BEGIN
    IF NOT mq.caller_has('operator') THEN
        PERFORM mq.refuse('only the operator purges');
    END IF;
    RETURN QUERY
    WITH w AS (SELECT s.scanned_through AS through, now() - make_interval(secs => p_older_than_seconds) AS cutoff
                 FROM mq.audit_state s),
         a AS (DELETE FROM mq.archive x USING w WHERE x.id <= w.through AND x.created_at < w.cutoff RETURNING 1),
         d AS (DELETE FROM mq.dead_letters x USING w
                WHERE p_dead_letters AND x.id <= w.through AND x.created_at < w.cutoff RETURNING 1)
    SELECT (SELECT count(*) FROM a),
           (SELECT count(*) FROM d),
           (SELECT count(*) FROM mq.archive x, w WHERE x.id > w.through AND x.created_at < w.cutoff)
             + (SELECT count(*) FROM mq.dead_letters x, w WHERE p_dead_letters AND x.id > w.through AND x.created_at < w.cutoff),
           (SELECT count(*) FROM mq.messages x, w WHERE x.created_at < w.cutoff),
           (SELECT count(*) FROM mq.dead_letters x, w WHERE NOT p_dead_letters AND x.created_at < w.cutoff),
           (SELECT w.through FROM w);
END $$;

-- The audit horizon and watermark: the auditor's.
CREATE OR REPLACE FUNCTION mq.audit_horizon() RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog AS $$
DECLARE
    horizon bigint;
BEGIN
    IF NOT mq.caller_has('auditor') THEN
        PERFORM mq.refuse('only the auditor takes the audit horizon');
    END IF;
    PERFORM pg_advisory_xact_lock(mq.audit_lock_key());
    SELECT greatest(
        (SELECT coalesce(max(id), 0) FROM mq.messages),
        (SELECT coalesce(max(id), 0) FROM mq.archive),
        (SELECT coalesce(max(id), 0) FROM mq.dead_letters)) INTO horizon;
    RETURN horizon;
END $$;

CREATE FUNCTION mq.record_audit(p_scanned_through bigint) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog AS $$
BEGIN
    IF NOT mq.caller_has('auditor') THEN
        PERFORM mq.refuse('only the auditor records the audit watermark');
    END IF;
    UPDATE mq.audit_state
       SET scanned_through = greatest(scanned_through, p_scanned_through), scanned_at = now();
END $$;

-- Gives a role its part on this bus. p_part: producer or consumer (with the mailbox it owns),
-- auditor, or operator. Run by the bus's owner (an admin), never by the participants.
CREATE FUNCTION mq.grant_participant(p_role name, p_part text, p_mailbox text DEFAULT NULL)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog AS $$
DECLARE
    agent_functions constant text :=
        'mq.send(text, text, text[], text, jsonb[]), mq.claim(text, integer, double precision, integer), '
        'mq.ack(bigint[], bigint[]), mq.nack(bigint, bigint, double precision, text), '
        'mq.dead_letter(bigint, bigint, text), mq.stats(), mq.mailbox_owner(text)';
BEGIN
    EXECUTE format('GRANT USAGE ON SCHEMA mq TO %I', p_role);
    CASE p_part
    WHEN 'producer', 'consumer' THEN
        IF p_mailbox IS NULL THEN
            RAISE EXCEPTION 'a % needs the mailbox it owns', p_part;
        END IF;
        EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO %I', agent_functions, p_role);
        INSERT INTO mq.mailboxes (mailbox, owner) VALUES (p_mailbox, p_role)
        ON CONFLICT (mailbox) DO UPDATE SET owner = EXCLUDED.owner;
    WHEN 'auditor' THEN
        EXECUTE format('GRANT SELECT ON mq.messages, mq.archive, mq.dead_letters, mq.audit_state TO %I', p_role);
        EXECUTE format('GRANT EXECUTE ON FUNCTION mq.audit_horizon(), mq.record_audit(bigint), mq.stats() TO %I', p_role);
        INSERT INTO mq.duties (role, duty) VALUES (p_role, 'auditor') ON CONFLICT DO NOTHING;
    WHEN 'operator' THEN
        EXECUTE format('GRANT EXECUTE ON FUNCTION mq.send(text, text, text[], text, jsonb[]), mq.stats(), '
                       'mq.redrive(text), mq.purge(double precision, boolean) TO %I', p_role);
        INSERT INTO mq.duties (role, duty) VALUES (p_role, 'operator') ON CONFLICT DO NOTHING;
    ELSE
        RAISE EXCEPTION 'unknown part %: producer, consumer, auditor or operator', p_part;
    END CASE;
END $$;

-- Nothing of the bus is PUBLIC's: functions are executable by PUBLIC when created, so this comes
-- last, after every function of the schema exists.
REVOKE ALL ON SCHEMA mq FROM PUBLIC;
REVOKE ALL ON ALL TABLES IN SCHEMA mq FROM PUBLIC;
REVOKE ALL ON ALL SEQUENCES IN SCHEMA mq FROM PUBLIC;
REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA mq FROM PUBLIC;
