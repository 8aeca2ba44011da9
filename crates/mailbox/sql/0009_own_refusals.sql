-- The bus's own refusals say what to do, and come through (issue 55).
--
-- mq.grant_participant raised plain exceptions (SQLSTATE P0001), which maskbus shows only as
-- "an exception raised by a PL/pgSQL function": an error's text may quote a value, so the text
-- of a server's error is never shown unless it is known to be the bus's own. Its refusals now
-- carry the bus's mark, as mq.denied and mq.over_limit's do: SCHEMA = 'mq', a message that
-- starts "refused by the bus: ", and a SQLSTATE that says what kind of refusal it is (42704 no
-- such role, 22023 an argument the bus does not take). A missing role says how to make it.

CREATE OR REPLACE FUNCTION mq.grant_participant(p_role name, p_part text, p_mailbox text DEFAULT NULL)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    agent_functions constant text :=
        'mq.send(text, text, text[], text, text[]), mq.claim(text, integer, double precision, integer), '
        'mq.ack(bigint[], bigint[]), mq.nack(bigint, bigint, double precision, text), '
        'mq.dead_letter(bigint, bigint, text), mq.stats(), mq.mailbox_owner(text), '
        'mq.pending_to(text), mq.bus_limits(), mq.audit_status()';
BEGIN
    IF lower(p_role) IN ('public', 'none') OR p_role LIKE 'pg\_%' THEN
        RAISE EXCEPTION USING ERRCODE = '22023', SCHEMA = 'mq', MESSAGE = format(
            'refused by the bus: %s is not a role a part of the bus is granted to; name a login role of its own', p_role);
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles r WHERE r.rolname = p_role) THEN
        RAISE EXCEPTION USING ERRCODE = '42704', SCHEMA = 'mq', MESSAGE = format(
            'refused by the bus: no such role to grant a part of the bus to: %s; create the role first '
            '(CREATE ROLE %I LOGIN PASSWORD ''...''), then grant again', p_role, p_role);
    END IF;
    EXECUTE format('GRANT CONNECT ON DATABASE %I TO %I', current_database(), p_role);
    EXECUTE format('GRANT USAGE ON SCHEMA mq TO %I', p_role);
    CASE p_part
    WHEN 'producer', 'consumer' THEN
        IF p_mailbox IS NULL THEN
            RAISE EXCEPTION USING ERRCODE = '22023', SCHEMA = 'mq', MESSAGE = format(
                'refused by the bus: a %s needs the mailbox it owns', p_part);
        END IF;
        IF octet_length(p_mailbox) > (SELECT l.max_mailbox_name_bytes FROM mq.limits l) THEN
            RAISE EXCEPTION USING ERRCODE = '22023', SCHEMA = 'mq', MESSAGE = format(
                'refused by the bus: mailbox names have at most %s bytes', (SELECT l.max_mailbox_name_bytes FROM mq.limits l));
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
        RAISE EXCEPTION USING ERRCODE = '22023', SCHEMA = 'mq', MESSAGE = format(
            'refused by the bus: unknown part %s: producer, consumer, auditor or operator', p_part);
    END CASE;
END $$;
