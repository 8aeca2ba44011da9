-- Triage that says why, and mail that someone will read (issue 52).
--
-- 1. A finding's reason says why in words. An acknowledgement took any reason of printable
--    characters, so a reason of only U+200B, U+3000, U+00A0 or U+2800 passed. mq.check_reason
--    now wants 2 letters or more once the text is read as NFKC and the characters that show
--    nothing are left out (separators, format and control characters are not letters; the
--    Hangul fillers and the braille blank, which are or look like letters, are dropped): with
--    ICU, a letter is what ICU calls one (general category L), otherwise what the database's
--    locale does. `maskbus wire-audit --ack` checks the same before it calls, and more: the
--    reason is run through the audit's detectors and refused when it holds an SSN, a card or
--    any other finding (it is stored for good and read by every auditor).
-- 2. mq.ack_findings acknowledges several findings with one reason in one call (the ids the
--    auditor chose, by id or by detector and path or column), and returns the ids it
--    acknowledged; mq.ack_finding stays for one id, under the same rule.
-- 3. Mail to a mailbox without an owner is refused. Any participant could send to a mailbox
--    no role owns: nobody could ever claim it, and as it is never acked, no operator could
--    purge it either. mq.send now refuses it (42501) for every role but a superuser (whose bus
--    may have no grants at all); a mailbox gets its owner from mq.grant_participant
--    (`maskbus bus grant`), as every mailbox the agents use does.

-- The letters a reason holds, read as a person reads it.
CREATE FUNCTION mq.reason_letters(p_text text) RETURNS integer
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    folded text := p_text;
    letters integer;
BEGIN
    IF pg_catalog.getdatabaseencoding() = 'UTF8' THEN
        folded := normalize(p_text, NFKC);
    END IF;
    -- Letters that render as nothing: the Hangul fillers, and the braille blank for good measure.
    folded := pg_catalog.regexp_replace(folded, '[\u115F\u1160\u3164\uFFA0\u2800]', '', 'g');
    IF EXISTS (SELECT 1 FROM pg_catalog.pg_collation c WHERE c.collname = 'und-x-icu') THEN
        EXECUTE 'SELECT count(*)::integer FROM pg_catalog.regexp_matches($1 COLLATE "und-x-icu", ''[[:alpha:]]'', ''g'')'
           INTO letters USING folded;
    ELSE
        SELECT count(*)::integer INTO letters FROM pg_catalog.regexp_matches(folded, '[[:alpha:]]', 'g');
    END IF;
    RETURN letters;
END $$;

-- Refuses a reason without 2 letters (see above), over 500 characters, or with control characters.
CREATE FUNCTION mq.check_reason(p_reason text) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF p_reason IS NULL OR char_length(p_reason) > 500 OR p_reason ~ '[[:cntrl:]]' THEN
        PERFORM mq.refuse_limit('a finding is acknowledged with a reason of 1 to 500 printable characters');
    END IF;
    IF mq.reason_letters(p_reason) < 2 THEN
        PERFORM mq.refuse_limit('a finding''s reason says why in words: it needs 2 letters or more once spaces, '
                                || 'invisible, format and control characters are left out');
    END IF;
END $$;

CREATE OR REPLACE FUNCTION mq.ack_finding(p_id bigint, p_reason text) RETURNS boolean
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    changed integer;
BEGIN
    IF NOT mq.caller_has('auditor') THEN
        PERFORM mq.refuse('only the auditor acknowledges findings');
    END IF;
    PERFORM mq.check_reason(p_reason);
    UPDATE mq.audit_findings
       SET acked_at = now(), acked_by = session_user, ack_reason = p_reason
     WHERE id = p_id AND acked_at IS NULL;
    GET DIAGNOSTICS changed = ROW_COUNT;
    RETURN changed > 0;
END $$;

-- Acknowledges every open finding of `p_ids` with one reason; returns the ids acknowledged
-- (an id that is no open finding is left out). The auditor's.
CREATE FUNCTION mq.ack_findings(p_ids bigint[], p_reason text) RETURNS SETOF bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    IF NOT mq.caller_has('auditor') THEN
        PERFORM mq.refuse('only the auditor acknowledges findings');
    END IF;
    PERFORM mq.check_reason(p_reason);
    IF coalesce(cardinality(p_ids), 0) > 100000 THEN
        PERFORM mq.refuse_limit('one acknowledgement names at most 100000 findings');
    END IF;
    RETURN QUERY
    UPDATE mq.audit_findings f
       SET acked_at = now(), acked_by = session_user, ack_reason = p_reason
     WHERE f.id = ANY (p_ids) AND f.acked_at IS NULL
    RETURNING f.id;
END $$;

CREATE OR REPLACE FUNCTION mq.send(p_mailbox text, p_kind text, p_correlation_ids text[], p_reply_to text, p_bodies text[])
RETURNS SETOF bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    lim mq.limits%ROWTYPE;
    superuser constant boolean := mq.caller_is_superuser();
    v_count integer := coalesce(cardinality(p_bodies), 0);
    v_pending bigint;
BEGIN
    IF NOT mq.caller_participates() THEN
        PERFORM mq.refuse(session_user || ' is not a participant of this bus (see maskbus bus grant)');
    END IF;
    SELECT * INTO lim FROM mq.limits;
    IF p_mailbox IS NULL OR octet_length(p_mailbox) NOT BETWEEN 1 AND lim.max_mailbox_name_bytes THEN
        PERFORM mq.refuse_limit('a mailbox name has 1 to ' || lim.max_mailbox_name_bytes || ' bytes');
    END IF;
    IF NOT superuser AND NOT EXISTS (SELECT 1 FROM mq.mailboxes b WHERE b.mailbox = p_mailbox) THEN
        PERFORM mq.refuse('mailbox ' || left(p_mailbox, 64) || ' has no owner, so nobody could ever claim what is '
                          || 'sent there; the bus''s owner gives it one with maskbus bus grant');
    END IF;
    IF p_reply_to IS NOT NULL THEN
        IF octet_length(p_reply_to) NOT BETWEEN 1 AND lim.max_mailbox_name_bytes THEN
            PERFORM mq.refuse_limit('a reply_to mailbox name has 1 to ' || lim.max_mailbox_name_bytes || ' bytes');
        END IF;
        IF NOT mq.caller_owns(p_reply_to) THEN
            PERFORM mq.refuse('replies may go only to a mailbox the sender owns, and '
                              || session_user || ' does not own the reply_to mailbox');
        END IF;
    END IF;
    IF p_kind IS NULL OR octet_length(p_kind) NOT BETWEEN 1 AND lim.max_kind_bytes THEN
        PERFORM mq.refuse_limit('a kind has 1 to ' || lim.max_kind_bytes || ' bytes');
    END IF;
    IF EXISTS (SELECT 1 FROM unnest(p_bodies) b WHERE b IS NULL OR octet_length(b) > lim.max_body_bytes) THEN
        PERFORM mq.refuse_limit('a body is JSON text of at most ' || lim.max_body_bytes || ' bytes');
    END IF;
    IF coalesce(cardinality(p_correlation_ids), 0) <> v_count THEN
        PERFORM mq.refuse_limit('one correlation id (or NULL) per body');
    END IF;
    IF v_count > lim.max_messages_per_send AND NOT superuser THEN
        PERFORM mq.refuse_limit('one send carries at most ' || lim.max_messages_per_send || ' messages');
    END IF;
    IF EXISTS (SELECT 1 FROM unnest(p_correlation_ids) c WHERE octet_length(c) > lim.max_correlation_id_bytes) THEN
        PERFORM mq.refuse_limit('a correlation id has at most ' || lim.max_correlation_id_bytes || ' bytes');
    END IF;
    IF NOT superuser THEN
        SELECT count(*) INTO v_pending FROM mq.mail m
         WHERE m.sender = session_user AND m.mailbox = p_mailbox AND m.acked_at IS NULL;
        IF v_pending + v_count > lim.max_pending_per_mailbox THEN
            PERFORM mq.refuse_limit(session_user || ' has ' || v_pending || ' unacked messages in that mailbox; '
                                    || 'a sender may have at most ' || lim.max_pending_per_mailbox || ' in one');
        END IF;
    END IF;
    LOCK TABLE mq.send_gate IN ROW SHARE MODE;
    RETURN QUERY
    INSERT INTO mq.mail (mailbox, sender, kind, correlation_id, reply_to, body)
    SELECT p_mailbox, session_user, p_kind, c, p_reply_to, b
      FROM unnest(p_bodies, p_correlation_ids) WITH ORDINALITY AS u(b, c, n)
     ORDER BY n
    RETURNING id;
    -- Delivered at commit; receivers that miss it (reconnecting) poll as a fallback.
    PERFORM pg_notify('mq_messages', p_mailbox);
END $$;

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
                       'mq.ack_findings(bigint[], text), mq.audit_findings_list(), mq.audit_status() TO %I', p_role);
        INSERT INTO mq.duties (role, duty) VALUES (p_role, 'auditor') ON CONFLICT DO NOTHING;
    WHEN 'operator' THEN
        EXECUTE format('GRANT EXECUTE ON FUNCTION mq.send(text, text, text[], text, text[]), mq.stats(), '
                       'mq.redrive(text), mq.purge(double precision, boolean), mq.bus_limits(), mq.audit_status() TO %I', p_role);
        INSERT INTO mq.duties (role, duty) VALUES (p_role, 'operator') ON CONFLICT DO NOTHING;
    ELSE
        RAISE EXCEPTION 'unknown part %: producer, consumer, auditor or operator', p_part;
    END CASE;
END $$;

REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA mq FROM PUBLIC;

-- Every auditor gets the new function.
DO $$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT d.role FROM mq.duties d WHERE d.duty = 'auditor' LOOP
        IF EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = r.role) THEN
            PERFORM mq.grant_participant(r.role, 'auditor');
        END IF;
    END LOOP;
END $$;
