-- Bodies are kept as text. Until now the column was `json`, so the bus server parsed every byte
-- of every body when it was sent: on a large initial sync that check was a fifth of the bus's
-- CPU (150 MB of pages parsed once more, on a machine whose cores the sync already fills), and
-- it protected nobody. Every reader parses a body itself with the grammar and limits it trusts:
-- the agents dead-letter a body that is not JSON they can read (`Mailbox::claim`), and the
-- wire audit scans such a body as plain text. A participant is authenticated (0003), so a
-- malformed body still names its sender. Bodies stay compressed with lz4 where the server has it.

DROP VIEW mq.messages;
DROP VIEW mq.archive;

ALTER TABLE mq.mail ALTER COLUMN body TYPE text;
ALTER TABLE mq.dead_letters ALTER COLUMN body TYPE text;

DO $$
BEGIN
    ALTER TABLE mq.mail ALTER COLUMN body SET COMPRESSION lz4;
    ALTER TABLE mq.dead_letters ALTER COLUMN body SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported OR invalid_parameter_value THEN
    NULL; -- a server built without lz4 keeps pglz
END $$;

CREATE VIEW mq.messages AS
SELECT id, mailbox, sender, kind, correlation_id, reply_to, body, created_at,
       attempts, visible_at, lease, last_error
  FROM mq.mail WHERE acked_at IS NULL;

CREATE VIEW mq.archive AS
SELECT id, mailbox, sender, kind, correlation_id, reply_to, body, created_at, attempts, acked_at
  FROM mq.mail WHERE acked_at IS NOT NULL;

DROP FUNCTION mq.send(text, text, text[], text, json[]);
CREATE FUNCTION mq.send(
    p_mailbox text, p_kind text, p_correlation_ids text[], p_reply_to text, p_bodies text[]
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

-- Claiming: as in 0004, the body handed back as stored.
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
           l.body, octet_length(l.body), l.attempts, l.lease
      FROM leased l;
END $$;

CREATE OR REPLACE FUNCTION mq.grant_participant(p_role name, p_part text, p_mailbox text DEFAULT NULL)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog AS $$
DECLARE
    agent_functions constant text :=
        'mq.send(text, text, text[], text, text[]), mq.claim(text, integer, double precision, integer), '
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
        EXECUTE format('GRANT EXECUTE ON FUNCTION mq.send(text, text, text[], text, text[]), mq.stats(), '
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
