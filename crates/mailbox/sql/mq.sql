-- The bus, as it stands today: one current definition of every table, view and function of
-- schema mq. A fresh bus is made from this file alone (`maskbus bus init`); a bus made by an
-- older release is brought here by the numbered steps beside it (0001 ... 0009), which are
-- history and never edited. `tests/integration/mailbox.rs:
-- a_fresh_bus_equals_one_upgraded_step_by_step` holds the two equal, object by object; a change
-- to the bus is a new step AND the same change here.
--
-- What the bus guarantees, and why each piece is the way it is, is told in the steps' own
-- comments and in docs/internals.md ("The bus and what it guarantees") and docs/deployment.md
-- ("Side doors").

-- Functions call one another; their bodies are checked when called, not in creation order.
SET LOCAL check_function_bodies = off;

CREATE SCHEMA mq;

-- Tables: every message in flight or acked (mq.mail), the dead letters, who owns which
-- mailbox, the duties beyond that, the audit's watermark and findings, the bus's limits, and
-- the gate sends and the audit horizon meet on.

CREATE TABLE mq.mail (
    id bigint NOT NULL,
    mailbox text NOT NULL,
    sender text NOT NULL,
    kind text NOT NULL,
    correlation_id text,
    reply_to text,
    body text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    visible_at timestamp with time zone DEFAULT now() NOT NULL,
    lease bigint,
    last_error text,
    acked_at timestamp with time zone
);

CREATE TABLE mq.audit_findings (
    id bigint NOT NULL,
    message_id bigint NOT NULL,
    mailbox text NOT NULL,
    detector text NOT NULL,
    path text NOT NULL,
    found_at timestamp with time zone DEFAULT now() NOT NULL,
    found_by name DEFAULT SESSION_USER NOT NULL,
    acked_at timestamp with time zone,
    acked_by name,
    ack_reason text,
    CONSTRAINT audit_findings_check CHECK (((acked_at IS NULL) = (ack_reason IS NULL)))
);

CREATE TABLE mq.audit_state (
    singleton boolean DEFAULT true NOT NULL,
    scanned_through bigint DEFAULT 0 NOT NULL,
    scanned_at timestamp with time zone,
    CONSTRAINT audit_state_singleton_check CHECK (singleton)
);

CREATE TABLE mq.dead_letters (
    id bigint NOT NULL,
    mailbox text NOT NULL,
    sender text NOT NULL,
    kind text NOT NULL,
    correlation_id text,
    reply_to text,
    body text NOT NULL,
    created_at timestamp with time zone NOT NULL,
    attempts integer NOT NULL,
    error text NOT NULL,
    died_at timestamp with time zone DEFAULT now() NOT NULL
);

CREATE TABLE mq.duties (
    role name NOT NULL,
    duty text NOT NULL,
    CONSTRAINT duties_duty_check CHECK ((duty = ANY (ARRAY['auditor'::text, 'operator'::text])))
);

CREATE TABLE mq.limits (
    singleton boolean DEFAULT true NOT NULL,
    max_mailbox_name_bytes integer DEFAULT 128 NOT NULL,
    max_kind_bytes integer DEFAULT 64 NOT NULL,
    max_correlation_id_bytes integer DEFAULT 128 NOT NULL,
    max_body_bytes integer DEFAULT 67108864 NOT NULL,
    max_messages_per_send integer DEFAULT 256 NOT NULL,
    max_pending_per_mailbox integer DEFAULT 20000 NOT NULL,
    CONSTRAINT limits_max_body_bytes_check CHECK ((max_body_bytes >= 1024)),
    CONSTRAINT limits_max_correlation_id_bytes_check CHECK (((max_correlation_id_bytes >= 1) AND (max_correlation_id_bytes <= 1024))),
    CONSTRAINT limits_max_kind_bytes_check CHECK (((max_kind_bytes >= 1) AND (max_kind_bytes <= 1024))),
    CONSTRAINT limits_max_mailbox_name_bytes_check CHECK (((max_mailbox_name_bytes >= 1) AND (max_mailbox_name_bytes <= 1024))),
    CONSTRAINT limits_max_messages_per_send_check CHECK ((max_messages_per_send >= 1)),
    CONSTRAINT limits_max_pending_per_mailbox_check CHECK ((max_pending_per_mailbox >= 1)),
    CONSTRAINT limits_singleton_check CHECK (singleton)
);

CREATE TABLE mq.mailboxes (
    mailbox text NOT NULL,
    owner name NOT NULL
);

CREATE TABLE mq.send_gate (
);

CREATE SEQUENCE mq.lease_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER TABLE mq.audit_findings ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME mq.audit_findings_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

ALTER TABLE mq.mail ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME mq.messages_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

ALTER TABLE ONLY mq.audit_findings
    ADD CONSTRAINT audit_findings_message_id_detector_path_key UNIQUE (message_id, detector, path);

ALTER TABLE ONLY mq.audit_findings
    ADD CONSTRAINT audit_findings_pkey PRIMARY KEY (id);

ALTER TABLE ONLY mq.audit_state
    ADD CONSTRAINT audit_state_pkey PRIMARY KEY (singleton);

ALTER TABLE ONLY mq.dead_letters
    ADD CONSTRAINT dead_letters_pkey PRIMARY KEY (id);

ALTER TABLE ONLY mq.duties
    ADD CONSTRAINT duties_pkey PRIMARY KEY (role, duty);

ALTER TABLE ONLY mq.limits
    ADD CONSTRAINT limits_pkey PRIMARY KEY (singleton);

ALTER TABLE ONLY mq.mail
    ADD CONSTRAINT mail_pkey PRIMARY KEY (id);

ALTER TABLE ONLY mq.mailboxes
    ADD CONSTRAINT mailboxes_pkey PRIMARY KEY (mailbox);

CREATE INDEX audit_findings_open_idx ON mq.audit_findings USING btree (message_id) WHERE (acked_at IS NULL);

CREATE INDEX dead_letters_mailbox_idx ON mq.dead_letters USING btree (mailbox);

CREATE INDEX mail_claim_idx ON mq.mail USING btree (mailbox, visible_at, id) WHERE (acked_at IS NULL);

CREATE INDEX mail_sender_pending_idx ON mq.mail USING btree (sender, mailbox) WHERE (acked_at IS NULL);


--
-- PostgreSQL database dump complete
--

-- Bodies compressed with lz4 where the server has it (pglz otherwise).
DO $$
BEGIN
    ALTER TABLE mq.mail ALTER COLUMN body SET COMPRESSION lz4;
    ALTER TABLE mq.dead_letters ALTER COLUMN body SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported OR invalid_parameter_value THEN
    NULL;
END $$;

INSERT INTO mq.audit_state DEFAULT VALUES;
INSERT INTO mq.limits DEFAULT VALUES;

-- The views of mq.mail: the messages not yet acked, and the acked ones.

CREATE VIEW mq.archive AS
 SELECT mail.id,
    mail.mailbox,
    mail.sender,
    mail.kind,
    mail.correlation_id,
    mail.reply_to,
    mail.body,
    mail.created_at,
    mail.attempts,
    mail.acked_at
   FROM mq.mail
  WHERE (mail.acked_at IS NOT NULL);

CREATE VIEW mq.messages AS
 SELECT mail.id,
    mail.mailbox,
    mail.sender,
    mail.kind,
    mail.correlation_id,
    mail.reply_to,
    mail.body,
    mail.created_at,
    mail.attempts,
    mail.visible_at,
    mail.lease,
    mail.last_error
   FROM mq.mail
  WHERE (mail.acked_at IS NULL);

-- Functions: every operation of the bus, each checking its caller's right to it.

CREATE FUNCTION mq.ack(p_ids bigint[], p_leases bigint[]) RETURNS SETOF bigint
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
BEGIN
    RETURN QUERY
    UPDATE mq.mail m
       SET acked_at = now(), lease = NULL, visible_at = 'infinity'
      FROM unnest(p_ids, p_leases) AS l(id, lease)
     WHERE m.id = l.id AND m.lease = l.lease AND m.acked_at IS NULL AND mq.caller_owns(m.mailbox)
    RETURNING m.id;
END $$;

CREATE FUNCTION mq.ack_finding(p_id bigint, p_reason text) RETURNS boolean
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

CREATE FUNCTION mq.ack_findings(p_ids bigint[], p_reason text) RETURNS SETOF bigint
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

CREATE FUNCTION mq.audit_findings_list() RETURNS TABLE(id bigint, message_id bigint, mailbox text, detector text, path text, found_at timestamp with time zone, acked_at timestamp with time zone, acked_by name, ack_reason text)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
BEGIN
    IF NOT mq.caller_has('auditor') THEN
        PERFORM mq.refuse('only the auditor lists findings');
    END IF;
    RETURN QUERY
    SELECT f.id, f.message_id, f.mailbox, f.detector, f.path, f.found_at, f.acked_at, f.acked_by, f.ack_reason
      FROM mq.audit_findings f ORDER BY f.acked_at IS NOT NULL, f.id;
END $$;

CREATE FUNCTION mq.audit_horizon() RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET lock_timeout TO '10s'
    AS $$
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

CREATE FUNCTION mq.audit_status() RETURNS TABLE(scanned_through bigint, scanned_at timestamp with time zone, oldest_unaudited_secs double precision, open_findings bigint, acked_findings bigint)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

CREATE FUNCTION mq.bus_limits() RETURNS TABLE(max_mailbox_name_bytes integer, max_kind_bytes integer, max_correlation_id_bytes integer, max_body_bytes integer, max_messages_per_send integer, max_pending_per_mailbox integer)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    SELECT l.max_mailbox_name_bytes, l.max_kind_bytes, l.max_correlation_id_bytes, l.max_body_bytes,
           l.max_messages_per_send, l.max_pending_per_mailbox FROM mq.limits l
$$;

CREATE FUNCTION mq.caller_has(p_duty text) RETURNS boolean
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$ SELECT mq.caller_is_superuser()
              OR EXISTS (SELECT 1 FROM mq.duties WHERE role = session_user AND duty = p_duty) $$;

CREATE FUNCTION mq.caller_is_superuser() RETURNS boolean
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$ SELECT coalesce((SELECT r.rolsuper FROM pg_catalog.pg_roles r WHERE r.rolname = session_user), false) $$;

CREATE FUNCTION mq.caller_owns(p_mailbox text) RETURNS boolean
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$ SELECT mq.caller_is_superuser()
              OR EXISTS (SELECT 1 FROM mq.mailboxes WHERE mailbox = p_mailbox AND owner = session_user) $$;

CREATE FUNCTION mq.caller_participates() RETURNS boolean
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$ SELECT mq.caller_is_superuser()
              OR EXISTS (SELECT 1 FROM mq.mailboxes WHERE owner = session_user)
              OR EXISTS (SELECT 1 FROM mq.duties WHERE role = session_user) $$;

CREATE FUNCTION mq.check_reason(p_reason text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
BEGIN
    IF p_reason IS NULL OR char_length(p_reason) > 500 OR p_reason ~ '[[:cntrl:]]' THEN
        PERFORM mq.refuse_limit('a finding is acknowledged with a reason of 1 to 500 printable characters');
    END IF;
    IF mq.reason_letters(p_reason) < 2 THEN
        PERFORM mq.refuse_limit('a finding''s reason says why in words: it needs 2 letters or more once spaces, '
                                || 'invisible, format and control characters are left out');
    END IF;
END $$;

CREATE FUNCTION mq.claim(p_mailbox text, p_limit integer, p_lease_seconds double precision, p_max_attempts integer) RETURNS TABLE(id bigint, mailbox text, sender text, kind text, correlation_id text, reply_to text, body text, body_bytes integer, attempts integer, lease bigint)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

CREATE FUNCTION mq.dead_letter(p_id bigint, p_lease bigint, p_reason text) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

CREATE FUNCTION mq.grant_participant(p_role name, p_part text, p_mailbox text DEFAULT NULL::text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

CREATE FUNCTION mq.mailbox_owner(p_mailbox text) RETURNS name
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$ SELECT owner FROM mq.mailboxes WHERE mailbox = p_mailbox $$;

CREATE FUNCTION mq.nack(p_id bigint, p_lease bigint, p_delay_seconds double precision, p_error text) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

CREATE FUNCTION mq.pending_to(p_mailbox text) RETURNS bigint
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
    SELECT count(*) FROM mq.mail m
     WHERE m.sender = session_user AND m.mailbox = p_mailbox AND m.acked_at IS NULL
$$;

CREATE FUNCTION mq.purge(p_older_than_seconds double precision, p_dead_letters boolean) RETURNS TABLE(deleted_archived bigint, deleted_dead bigint, kept_unaudited bigint, kept_in_flight bigint, kept_dead bigint, audited_through bigint, kept_evidence bigint)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

CREATE FUNCTION mq.reason_letters(p_text text) RETURNS integer
    LANGUAGE plpgsql STABLE
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

CREATE FUNCTION mq.record_audit(p_scanned_through bigint) RETURNS void
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

CREATE FUNCTION mq.record_findings(p_message_ids bigint[], p_mailboxes text[], p_detectors text[], p_paths text[]) RETURNS TABLE(id bigint, message_id bigint, detector text, path text, acked boolean)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

CREATE FUNCTION mq.redrive(p_mailbox text) RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

CREATE FUNCTION mq.refuse(p_what text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$ BEGIN RAISE EXCEPTION USING ERRCODE = '42501', MESSAGE = 'permission denied on the bus: ' || p_what, SCHEMA = 'mq'; END $$;

CREATE FUNCTION mq.refuse_limit(p_what text) RETURNS void
    LANGUAGE plpgsql
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$ BEGIN RAISE EXCEPTION USING ERRCODE = '54000', MESSAGE = 'over a limit of the bus: ' || p_what, SCHEMA = 'mq'; END $$;

CREATE FUNCTION mq.send(p_mailbox text, p_kind text, p_correlation_ids text[], p_reply_to text, p_bodies text[]) RETURNS SETOF bigint
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

CREATE FUNCTION mq.stats() RETURNS TABLE(mailbox text, pending bigint, leased bigint, delayed bigint, archived bigint, dead bigint, oldest_pending_secs double precision)
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

-- Nothing of the bus is PUBLIC's, not even the database: participants get CONNECT from
-- mq.grant_participant, and nobody makes temporary objects here.
REVOKE ALL ON SCHEMA mq FROM PUBLIC;
REVOKE ALL ON ALL TABLES IN SCHEMA mq FROM PUBLIC;
REVOKE ALL ON ALL SEQUENCES IN SCHEMA mq FROM PUBLIC;
REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA mq FROM PUBLIC;
DO $$
BEGIN
    EXECUTE format('REVOKE CONNECT, TEMPORARY ON DATABASE %I FROM PUBLIC', current_database());
END $$;
