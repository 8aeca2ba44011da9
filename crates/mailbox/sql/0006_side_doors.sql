-- The bus protects itself from its own participants.
--
-- 1. Rights that cannot be shadowed. Postgres searches `pg_temp` first for relations unless the
--    search path names it last, so a participant with TEMP could create `pg_temp.pg_roles` and
--    make itself superuser in the eyes of mq.caller_is_superuser(). Every function of schema mq
--    now runs with `search_path = pg_catalog, pg_temp` (pg_temp last), every catalog it reads is
--    schema-qualified, and PUBLIC loses CONNECT and TEMP on the bus database: only the roles
--    `mq.grant_participant` names may connect, and none may create temporary objects. Outside
--    roles can therefore neither LISTEN nor NOTIFY on the bus's channel.
-- 2. Limits, enforced here and not only by the agents (mq.limits, one row, tunable by the bus's
--    owner): the length of a mailbox name, a kind and a correlation id, the size of a body, how
--    many messages one call of mq.send may carry, and how many unacked messages one sender may
--    have in one mailbox (per mailbox: a consumer that never acks fills its own, not the
--    producer's quota towards everyone else).
-- 5. Sends and the audit horizon meet on a table lock (mq.send_gate) no participant can take,
--    instead of an advisory lock whose key anyone could hold to stop every send; the horizon
--    gives up after lock_timeout rather than queue sends behind it.
-- 3. A reply goes only to a mailbox its requester owns: mq.send refuses a `reply_to` naming a
--    mailbox the sending role does not own, so nobody can aim a producer's replies at a mailbox
--    nobody drains.
-- 4. mq.pending_to(mailbox): how many messages the caller sent there that are still unacked,
--    so a producer can refuse a request whose replies would go over the requester's quota.

CREATE TABLE mq.limits (
    singleton                boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    max_mailbox_name_bytes   integer NOT NULL DEFAULT 128 CHECK (max_mailbox_name_bytes BETWEEN 1 AND 1024),
    max_kind_bytes           integer NOT NULL DEFAULT 64 CHECK (max_kind_bytes BETWEEN 1 AND 1024),
    max_correlation_id_bytes integer NOT NULL DEFAULT 128 CHECK (max_correlation_id_bytes BETWEEN 1 AND 1024),
    max_body_bytes           integer NOT NULL DEFAULT 67108864 CHECK (max_body_bytes >= 1024),
    max_messages_per_send    integer NOT NULL DEFAULT 256 CHECK (max_messages_per_send >= 1),
    max_pending_per_mailbox  integer NOT NULL DEFAULT 20000 CHECK (max_pending_per_mailbox >= 1)
);
INSERT INTO mq.limits DEFAULT VALUES;

-- Sends take it in ROW SHARE mode (they never wait for each other), the audit horizon in
-- EXCLUSIVE mode for an instant. Nobody but the bus's functions may lock it.
CREATE TABLE mq.send_gate ();

-- Counting a sender's unacked messages reads this index only.
CREATE INDEX mail_sender_pending_idx ON mq.mail (sender, mailbox) WHERE acked_at IS NULL;

CREATE OR REPLACE FUNCTION mq.caller_is_superuser() RETURNS boolean LANGUAGE sql STABLE
    SET search_path = pg_catalog, pg_temp
    AS $$ SELECT coalesce((SELECT r.rolsuper FROM pg_catalog.pg_roles r WHERE r.rolname = session_user), false) $$;

-- Sending: the sender is the session's role; names, ids and volume within mq.limits; a reply
-- address only of the sender's own.
CREATE OR REPLACE FUNCTION mq.send(
    p_mailbox text, p_kind text, p_correlation_ids text[], p_reply_to text, p_bodies text[]
) RETURNS SETOF bigint LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
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

-- The audit horizon: an id below which every message ever sent is committed or rolled back.
-- It waits (at most lock_timeout) for the sends in flight; the auditor tries again later.
CREATE OR REPLACE FUNCTION mq.audit_horizon() RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET lock_timeout = '10s' AS $$
DECLARE
    horizon bigint;
BEGIN
    IF NOT mq.caller_has('auditor') THEN
        PERFORM mq.refuse('only the auditor takes the audit horizon');
    END IF;
    LOCK TABLE mq.send_gate IN EXCLUSIVE MODE;
    SELECT greatest(
        (SELECT coalesce(max(id), 0) FROM mq.mail),
        (SELECT coalesce(max(id), 0) FROM mq.dead_letters)) INTO horizon;
    RETURN horizon;
END $$;

DROP FUNCTION mq.audit_lock_key();

-- A request over a limit of the bus: SQLSTATE 54000 (program_limit_exceeded), never retried.
CREATE FUNCTION mq.refuse_limit(p_what text) RETURNS void LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
    AS $$ BEGIN RAISE EXCEPTION USING ERRCODE = '54000', MESSAGE = 'over a limit of the bus: ' || p_what, SCHEMA = 'mq'; END $$;

-- Refusals name the bus's schema, so a client can tell the bus's own sentence (which quotes
-- nothing but role and mailbox names) from a server message that may quote values.
CREATE OR REPLACE FUNCTION mq.refuse(p_what text) RETURNS void LANGUAGE plpgsql
    SET search_path = pg_catalog, pg_temp
    AS $$ BEGIN RAISE EXCEPTION USING ERRCODE = '42501', MESSAGE = 'permission denied on the bus: ' || p_what, SCHEMA = 'mq'; END $$;

-- The caller's unacked messages in one mailbox: a producer checks a requester's quota with it.
CREATE FUNCTION mq.pending_to(p_mailbox text) RETURNS bigint
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    SELECT count(*) FROM mq.mail m
     WHERE m.sender = session_user AND m.mailbox = p_mailbox AND m.acked_at IS NULL
$$;

-- The limits, for any participant (and the docs).
CREATE FUNCTION mq.bus_limits()
RETURNS TABLE (max_mailbox_name_bytes integer, max_kind_bytes integer, max_correlation_id_bytes integer,
               max_body_bytes integer, max_messages_per_send integer, max_pending_per_mailbox integer)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
    SELECT l.max_mailbox_name_bytes, l.max_kind_bytes, l.max_correlation_id_bytes, l.max_body_bytes,
           l.max_messages_per_send, l.max_pending_per_mailbox FROM mq.limits l
$$;

CREATE OR REPLACE FUNCTION mq.grant_participant(p_role name, p_part text, p_mailbox text DEFAULT NULL)
RETURNS void LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    agent_functions constant text :=
        'mq.send(text, text, text[], text, text[]), mq.claim(text, integer, double precision, integer), '
        'mq.ack(bigint[], bigint[]), mq.nack(bigint, bigint, double precision, text), '
        'mq.dead_letter(bigint, bigint, text), mq.stats(), mq.mailbox_owner(text), '
        'mq.pending_to(text), mq.bus_limits()';
BEGIN
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
        EXECUTE format('GRANT EXECUTE ON FUNCTION mq.audit_horizon(), mq.record_audit(bigint), mq.stats(), mq.bus_limits() TO %I', p_role);
        INSERT INTO mq.duties (role, duty) VALUES (p_role, 'auditor') ON CONFLICT DO NOTHING;
    WHEN 'operator' THEN
        EXECUTE format('GRANT EXECUTE ON FUNCTION mq.send(text, text, text[], text, text[]), mq.stats(), '
                       'mq.redrive(text), mq.purge(double precision, boolean), mq.bus_limits() TO %I', p_role);
        INSERT INTO mq.duties (role, duty) VALUES (p_role, 'operator') ON CONFLICT DO NOTHING;
    ELSE
        RAISE EXCEPTION 'unknown part %: producer, consumer, auditor or operator', p_part;
    END CASE;
END $$;

-- Every function of the bus, old and new: pg_temp searched last.
DO $$
DECLARE
    f regprocedure;
BEGIN
    FOR f IN SELECT p.oid::regprocedure FROM pg_catalog.pg_proc p
               JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
              WHERE n.nspname = 'mq'
    LOOP
        EXECUTE format('ALTER FUNCTION %s SET search_path = pg_catalog, pg_temp', f);
    END LOOP;
END $$;

-- Only participants connect, and nobody makes temporary objects on the bus.
DO $$
BEGIN
    EXECUTE format('REVOKE CONNECT, TEMPORARY ON DATABASE %I FROM PUBLIC', current_database());
END $$;

REVOKE ALL ON mq.limits, mq.send_gate FROM PUBLIC;
REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA mq FROM PUBLIC;

-- Participants granted before this file keep their part, with CONNECT now granted explicitly.
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
