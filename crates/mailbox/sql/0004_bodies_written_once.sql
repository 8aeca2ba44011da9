-- Each body is written once. Until now a body was parsed into jsonb when sent, printed back to
-- text when claimed, and copied whole from mq.messages into mq.archive when acked: three passes
-- over every byte on the server, and two copies on disk and in the WAL. Now:
--
--   mq.mail        every message in flight or acked: the one table that holds their bodies.
--                  An ack marks the row (acked_at, lease cleared, never visible again); the
--                  body's TOAST pointer is kept, so the body itself is not rewritten.
--   mq.messages    a view: the messages not yet acked (pending, leased, delayed), as before.
--   mq.archive     a view: the acked messages, as before.
--   mq.dead_letters  unchanged: a table of its own (dead letters are rare, and kept apart).
--
-- The audit, stats and purge read the views and see what they saw; claims are served by a
-- partial index over the unacked rows only, so they stay fast however long the history grows.
-- Bodies are `json`: checked as JSON when sent and kept as sent, so a claim hands them back
-- without conversion. They are compressed with lz4 where the server has it (pglz otherwise).

ALTER TABLE mq.messages RENAME TO mail;
ALTER INDEX mq.messages_pkey RENAME TO mail_pkey;
ALTER TABLE mq.mail ALTER COLUMN body TYPE json USING body::json;
ALTER TABLE mq.mail ADD COLUMN acked_at timestamptz;
ALTER TABLE mq.dead_letters ALTER COLUMN body TYPE json USING body::json;

INSERT INTO mq.mail (id, mailbox, sender, kind, correlation_id, reply_to, body, created_at,
                     attempts, visible_at, lease, last_error, acked_at)
OVERRIDING SYSTEM VALUE
SELECT id, mailbox, sender, kind, correlation_id, reply_to, body::json, created_at,
       attempts, 'infinity', NULL, NULL, acked_at
  FROM mq.archive;
DROP TABLE mq.archive;

DROP INDEX mq.messages_claim_idx;
CREATE INDEX mail_claim_idx ON mq.mail (mailbox, visible_at, id) WHERE acked_at IS NULL;

DO $$
BEGIN
    ALTER TABLE mq.mail ALTER COLUMN body SET COMPRESSION lz4;
    ALTER TABLE mq.dead_letters ALTER COLUMN body SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported OR invalid_parameter_value THEN
    NULL; -- a server built without lz4 keeps pglz
END $$;

-- Simple views: the functions of 0003 claim, nack, dead-letter, redrive and purge through them
-- unchanged (Postgres writes through such views into mq.mail).
CREATE VIEW mq.messages AS
SELECT id, mailbox, sender, kind, correlation_id, reply_to, body, created_at,
       attempts, visible_at, lease, last_error
  FROM mq.mail WHERE acked_at IS NULL;

CREATE VIEW mq.archive AS
SELECT id, mailbox, sender, kind, correlation_id, reply_to, body, created_at, attempts, acked_at
  FROM mq.mail WHERE acked_at IS NOT NULL;

-- Sending: as before, with bodies as json.
DROP FUNCTION mq.send(text, text, text[], text, jsonb[]);
CREATE FUNCTION mq.send(
    p_mailbox text, p_kind text, p_correlation_ids text[], p_reply_to text, p_bodies json[]
) RETURNS SETOF bigint LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog AS $$
BEGIN
    IF NOT mq.caller_participates() THEN
        PERFORM mq.refuse(session_user || ' is not a participant of this bus (see maskbus bus grant)');
    END IF;
    PERFORM pg_advisory_xact_lock_shared(mq.audit_lock_key());
    RETURN QUERY
    INSERT INTO mq.mail (mailbox, sender, kind, correlation_id, reply_to, body)
    SELECT p_mailbox, session_user, p_kind, c, p_reply_to, b
      FROM unnest(p_bodies, p_correlation_ids) WITH ORDINALITY AS u(b, c, n)
     ORDER BY n
    RETURNING id;
    -- Delivered at commit; receivers that miss it (reconnecting) poll as a fallback.
    PERFORM pg_notify('mq_messages', p_mailbox);
END $$;

-- Acking: marks the messages whose lease the caller holds, in mailboxes it owns, as acked.
-- (plpgsql, whose plan is cached for the session: a sql function is planned at every call.)
DROP FUNCTION mq.ack(bigint[], bigint[]);
CREATE FUNCTION mq.ack(p_ids bigint[], p_leases bigint[]) RETURNS SETOF bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog AS $$
BEGIN
    RETURN QUERY
    UPDATE mq.mail m
       SET acked_at = now(), lease = NULL, visible_at = 'infinity'
      FROM unnest(p_ids, p_leases) AS l(id, lease)
     WHERE m.id = l.id AND m.lease = l.lease AND m.acked_at IS NULL AND mq.caller_owns(m.mailbox)
    RETURNING m.id;
END $$;

-- Claiming, on the table itself (a view costs a rewrite at every plan): only unacked rows.
CREATE OR REPLACE FUNCTION mq.claim(p_mailbox text, p_limit integer, p_lease_seconds double precision, p_max_attempts integer)
RETURNS TABLE (id bigint, mailbox text, sender text, kind text, correlation_id text, reply_to text,
               body text, body_bytes integer, attempts integer, lease bigint)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog AS $$
BEGIN
    IF NOT mq.caller_owns(p_mailbox) THEN
        PERFORM mq.refuse('mailbox ' || left(p_mailbox, 64) || ' is not owned by ' || session_user);
    END IF;
    RETURN QUERY
    WITH next AS (
        SELECT m.id, m.attempts FROM mq.mail m
         WHERE m.mailbox = p_mailbox AND m.visible_at <= now() AND m.acked_at IS NULL
         ORDER BY m.visible_at, m.id
         LIMIT p_limit
         FOR UPDATE SKIP LOCKED
    ),
    exhausted AS (
        DELETE FROM mq.mail m USING next
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
        UPDATE mq.mail m
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

-- The audit horizon reads the one table (and the dead letters).
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
        (SELECT coalesce(max(id), 0) FROM mq.mail),
        (SELECT coalesce(max(id), 0) FROM mq.dead_letters)) INTO horizon;
    RETURN horizon;
END $$;

CREATE OR REPLACE FUNCTION mq.grant_participant(p_role name, p_part text, p_mailbox text DEFAULT NULL)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog AS $$
DECLARE
    agent_functions constant text :=
        'mq.send(text, text, text[], text, json[]), mq.claim(text, integer, double precision, integer), '
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
        EXECUTE format('GRANT SELECT ON mq.mail, mq.messages, mq.archive, mq.dead_letters, mq.audit_state TO %I', p_role);
        EXECUTE format('GRANT EXECUTE ON FUNCTION mq.audit_horizon(), mq.record_audit(bigint), mq.stats() TO %I', p_role);
        INSERT INTO mq.duties (role, duty) VALUES (p_role, 'auditor') ON CONFLICT DO NOTHING;
    WHEN 'operator' THEN
        EXECUTE format('GRANT EXECUTE ON FUNCTION mq.send(text, text, text[], text, json[]), mq.stats(), '
                       'mq.redrive(text), mq.purge(double precision, boolean) TO %I', p_role);
        INSERT INTO mq.duties (role, duty) VALUES (p_role, 'operator') ON CONFLICT DO NOTHING;
    ELSE
        RAISE EXCEPTION 'unknown part %: producer, consumer, auditor or operator', p_part;
    END CASE;
END $$;

REVOKE ALL ON mq.messages, mq.archive FROM PUBLIC;
REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA mq FROM PUBLIC;

-- Participants granted before this file keep their part: grant it again on the new objects.
DO $$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT owner AS role, 'producer' AS part, mailbox FROM mq.mailboxes
             UNION ALL SELECT role, duty, NULL FROM mq.duties
    LOOP
        IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = r.role) THEN
            PERFORM mq.grant_participant(r.role, r.part, r.mailbox);
        END IF;
    END LOOP;
END $$;
