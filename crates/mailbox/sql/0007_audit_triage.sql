-- Findings are triaged, not a dam.
--
-- Until now the audit watermark moved only after a clean scan, so one SSN-shaped note sent by
-- any participant made every later audit dirty and purge kept everything sent after it, for
-- good. Now the audit records what it found (mq.audit_findings: message, detector, path; never
-- the value), the watermark moves past every message whose findings are recorded, an auditor
-- acknowledges a finding with a reason (mq.ack_finding), and purge keeps the messages of open
-- findings as evidence (and deletes the rest as before). mq.audit_status() tells any
-- participant how far the audit is and how old the oldest unaudited message is.

CREATE TABLE mq.audit_findings (
    id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    message_id  bigint      NOT NULL,
    mailbox     text        NOT NULL,
    detector    text        NOT NULL,
    path        text        NOT NULL,
    found_at    timestamptz NOT NULL DEFAULT now(),
    found_by    name        NOT NULL DEFAULT session_user,
    acked_at    timestamptz,
    acked_by    name,
    ack_reason  text,
    UNIQUE (message_id, detector, path),
    CHECK ((acked_at IS NULL) = (ack_reason IS NULL))
);
CREATE INDEX audit_findings_open_idx ON mq.audit_findings (message_id) WHERE acked_at IS NULL;

-- Records findings (deduplicated: the same message, detector and path once) and returns every
-- one of them with its id and whether it is acknowledged. The auditor's.
CREATE FUNCTION mq.record_findings(p_message_ids bigint[], p_mailboxes text[], p_detectors text[], p_paths text[])
RETURNS TABLE (id bigint, message_id bigint, detector text, path text, acked boolean)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF NOT mq.caller_has('auditor') THEN
        PERFORM mq.refuse('only the auditor records findings');
    END IF;
    INSERT INTO mq.audit_findings (message_id, mailbox, detector, path)
    SELECT m, left(b, 200), left(d, 64), left(p, 500)
      FROM unnest(p_message_ids, p_mailboxes, p_detectors, p_paths) AS u(m, b, d, p)
    ON CONFLICT ON CONSTRAINT audit_findings_message_id_detector_path_key DO NOTHING;
    RETURN QUERY
    SELECT f.id, f.message_id, f.detector, f.path, f.acked_at IS NOT NULL
      FROM mq.audit_findings f
      JOIN unnest(p_message_ids, p_detectors, p_paths) AS u(m, d, p)
        ON f.message_id = u.m AND f.detector = left(u.d, 64) AND f.path = left(u.p, 500)
     ORDER BY f.id;
END $$;

-- Acknowledges a finding, with the reason (1 to 500 printable characters). The auditor's.
CREATE FUNCTION mq.ack_finding(p_id bigint, p_reason text) RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    changed integer;
BEGIN
    IF NOT mq.caller_has('auditor') THEN
        PERFORM mq.refuse('only the auditor acknowledges findings');
    END IF;
    IF p_reason IS NULL OR char_length(btrim(p_reason)) = 0 OR char_length(p_reason) > 500
       OR p_reason ~ '[[:cntrl:]]' THEN
        PERFORM mq.refuse_limit('a finding is acknowledged with a reason of 1 to 500 printable characters');
    END IF;
    UPDATE mq.audit_findings
       SET acked_at = now(), acked_by = session_user, ack_reason = p_reason
     WHERE id = p_id AND acked_at IS NULL;
    GET DIAGNOSTICS changed = ROW_COUNT;
    RETURN changed > 0;
END $$;

-- The findings, for the auditor: open ones first. Never a value (there is none to show).
CREATE FUNCTION mq.audit_findings_list()
RETURNS TABLE (id bigint, message_id bigint, mailbox text, detector text, path text, found_at timestamptz,
               acked_at timestamptz, acked_by name, ack_reason text)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF NOT mq.caller_has('auditor') THEN
        PERFORM mq.refuse('only the auditor lists findings');
    END IF;
    RETURN QUERY
    SELECT f.id, f.message_id, f.mailbox, f.detector, f.path, f.found_at, f.acked_at, f.acked_by, f.ack_reason
      FROM mq.audit_findings f ORDER BY f.acked_at IS NOT NULL, f.id;
END $$;

-- How far the audit is, for any participant (numbers only): the watermark, when it last moved,
-- how old the oldest message above it is, and the findings open and acknowledged.
CREATE FUNCTION mq.audit_status()
RETURNS TABLE (scanned_through bigint, scanned_at timestamptz, oldest_unaudited_secs double precision,
               open_findings bigint, acked_findings bigint)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF NOT (mq.caller_participates()) THEN
        PERFORM mq.refuse(session_user || ' is not a participant of this bus');
    END IF;
    RETURN QUERY
    SELECT s.scanned_through, s.scanned_at,
           extract(epoch FROM now() - least(
               (SELECT min(m.created_at) FROM mq.mail m WHERE m.id > s.scanned_through),
               (SELECT min(d.created_at) FROM mq.dead_letters d WHERE d.id > s.scanned_through)))::float8,
           (SELECT count(*) FROM mq.audit_findings f WHERE f.acked_at IS NULL),
           (SELECT count(*) FROM mq.audit_findings f WHERE f.acked_at IS NOT NULL)
      FROM mq.audit_state s;
END $$;

-- Purging: as before, and the messages of open findings stay as evidence.
DROP FUNCTION mq.purge(double precision, boolean);
CREATE FUNCTION mq.purge(p_older_than_seconds double precision, p_dead_letters boolean)
RETURNS TABLE (deleted_archived bigint, deleted_dead bigint, kept_unaudited bigint,
               kept_in_flight bigint, kept_dead bigint, audited_through bigint, kept_evidence bigint)
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF NOT mq.caller_has('operator') THEN
        PERFORM mq.refuse('only the operator purges');
    END IF;
    RETURN QUERY
    WITH w AS (SELECT s.scanned_through AS through, now() - make_interval(secs => p_older_than_seconds) AS cutoff
                 FROM mq.audit_state s),
         evidence AS (SELECT DISTINCT f.message_id AS id FROM mq.audit_findings f WHERE f.acked_at IS NULL),
         a AS (DELETE FROM mq.mail x USING w
                WHERE x.acked_at IS NOT NULL AND x.id <= w.through AND x.created_at < w.cutoff
                  AND x.id NOT IN (SELECT e.id FROM evidence e)
               RETURNING 1),
         d AS (DELETE FROM mq.dead_letters x USING w
                WHERE p_dead_letters AND x.id <= w.through AND x.created_at < w.cutoff
                  AND x.id NOT IN (SELECT e.id FROM evidence e)
               RETURNING 1)
    SELECT (SELECT count(*) FROM a),
           (SELECT count(*) FROM d),
           (SELECT count(*) FROM mq.mail x, w WHERE x.acked_at IS NOT NULL AND x.id > w.through AND x.created_at < w.cutoff)
             + (SELECT count(*) FROM mq.dead_letters x, w WHERE p_dead_letters AND x.id > w.through AND x.created_at < w.cutoff),
           (SELECT count(*) FROM mq.mail x, w WHERE x.acked_at IS NULL AND x.created_at < w.cutoff),
           (SELECT count(*) FROM mq.dead_letters x, w WHERE NOT p_dead_letters AND x.created_at < w.cutoff),
           (SELECT w.through FROM w),
           (SELECT count(*) FROM mq.mail x, w WHERE x.id <= w.through AND x.created_at < w.cutoff
               AND x.acked_at IS NOT NULL AND x.id IN (SELECT e.id FROM evidence e))
             + (SELECT count(*) FROM mq.dead_letters x, w WHERE p_dead_letters AND x.id <= w.through
               AND x.created_at < w.cutoff AND x.id IN (SELECT e.id FROM evidence e));
END $$;

-- The watermark never moves past what exists: a caller cannot mark unsent ids as scanned.
CREATE OR REPLACE FUNCTION mq.record_audit(p_scanned_through bigint) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF NOT mq.caller_has('auditor') THEN
        PERFORM mq.refuse('only the auditor records the audit watermark');
    END IF;
    UPDATE mq.audit_state
       SET scanned_through = greatest(scanned_through, least(p_scanned_through, greatest(
               (SELECT coalesce(max(m.id), 0) FROM mq.mail m),
               (SELECT coalesce(max(d.id), 0) FROM mq.dead_letters d)))),
           scanned_at = now();
END $$;

-- Gives a role its part: only a role that exists, never PUBLIC (GRANT ... TO "public" would
-- give every role CONNECT again).
CREATE OR REPLACE FUNCTION mq.grant_participant(p_role name, p_part text, p_mailbox text DEFAULT NULL)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    agent_functions constant text :=
        'mq.send(text, text, text[], text, text[]), mq.claim(text, integer, double precision, integer), '
        'mq.ack(bigint[], bigint[]), mq.nack(bigint, bigint, double precision, text), '
        'mq.dead_letter(bigint, bigint, text), mq.stats(), mq.mailbox_owner(text), '
        'mq.pending_to(text), mq.bus_limits(), mq.audit_status()';
BEGIN
    IF lower(p_role) IN ('public', 'none') OR p_role LIKE 'pg\_%'
       OR NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles r WHERE r.rolname = p_role) THEN
        RAISE EXCEPTION 'no such role to grant a part of the bus to: %', p_role;
    END IF;
    EXECUTE format('GRANT CONNECT ON DATABASE %I TO %I', current_database(), p_role);
    EXECUTE format('GRANT USAGE ON SCHEMA mq TO %I', p_role);
    CASE p_part
    WHEN 'producer', 'consumer' THEN
        IF p_mailbox IS NULL THEN
            RAISE EXCEPTION 'a % needs the mailbox it owns', p_part;
        END IF;
        IF octet_length(p_mailbox) > (SELECT l.max_mailbox_name_bytes FROM mq.limits l) THEN
            RAISE EXCEPTION 'mailbox names have at most % bytes', (SELECT l.max_mailbox_name_bytes FROM mq.limits l);
        END IF;
        EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO %I', agent_functions, p_role);
        INSERT INTO mq.mailboxes (mailbox, owner) VALUES (p_mailbox, p_role)
        ON CONFLICT (mailbox) DO UPDATE SET owner = EXCLUDED.owner;
    WHEN 'auditor' THEN
        EXECUTE format('GRANT SELECT ON mq.mail, mq.messages, mq.archive, mq.dead_letters, mq.audit_state TO %I', p_role);
        EXECUTE format('GRANT EXECUTE ON FUNCTION mq.audit_horizon(), mq.record_audit(bigint), mq.stats(), mq.bus_limits(), '
                       'mq.record_findings(bigint[], text[], text[], text[]), mq.ack_finding(bigint, text), '
                       'mq.audit_findings_list(), mq.audit_status() TO %I', p_role);
        INSERT INTO mq.duties (role, duty) VALUES (p_role, 'auditor') ON CONFLICT DO NOTHING;
    WHEN 'operator' THEN
        EXECUTE format('GRANT EXECUTE ON FUNCTION mq.send(text, text, text[], text, text[]), mq.stats(), '
                       'mq.redrive(text), mq.purge(double precision, boolean), mq.bus_limits(), mq.audit_status() TO %I', p_role);
        INSERT INTO mq.duties (role, duty) VALUES (p_role, 'operator') ON CONFLICT DO NOTHING;
    ELSE
        RAISE EXCEPTION 'unknown part %: producer, consumer, auditor or operator', p_part;
    END CASE;
END $$;

REVOKE ALL ON mq.audit_findings FROM PUBLIC;
REVOKE ALL ON ALL SEQUENCES IN SCHEMA mq FROM PUBLIC;
REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA mq FROM PUBLIC;

DO $$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT owner AS role, 'producer' AS part, mailbox FROM mq.mailboxes
             UNION ALL SELECT role, duty, NULL FROM mq.duties
    LOOP
        IF EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = r.role) THEN
            PERFORM mq.grant_participant(r.role, r.part, r.mailbox);
        END IF;
    END LOOP;
END $$;
