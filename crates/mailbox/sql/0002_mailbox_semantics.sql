-- The bus: leases, retries, dead letters and retention for audit.
--
-- mq.messages is the hot table: only messages waiting (pending), delayed after a nack, or leased
-- to a receiver live here, so claims stay fast however long the history grows. An acked message
-- moves to mq.archive, a dead one to mq.dead_letters, each keeping its id and body: together the
-- three tables hold every message ever sent, for the wire audit. Only `maskbus bus purge` deletes,
-- and only what the audit has scanned (mq.audit_state).
--
-- A message's state in mq.messages:
--   pending  visible_at <= now()                 (claimable; includes expired leases)
--   leased   visible_at >  now() AND lease IS NOT NULL
--   delayed  visible_at >  now() AND lease IS NULL (nacked, waiting for its backoff)

ALTER TABLE mq.messages ALTER COLUMN correlation_id TYPE text USING correlation_id::text;
ALTER TABLE mq.messages
    ADD COLUMN attempts   integer     NOT NULL DEFAULT 0,
    ADD COLUMN visible_at timestamptz NOT NULL DEFAULT now(),
    ADD COLUMN lease      bigint,
    ADD COLUMN last_error text;

-- Claims scan one mailbox in visibility order.
CREATE INDEX messages_claim_idx ON mq.messages (mailbox, visible_at, id);

-- Lease tokens: a new one at every claim, so an ack or nack from a receiver whose lease expired
-- and was re-claimed by another carries a stale token and is refused.
CREATE SEQUENCE mq.lease_seq;

CREATE TABLE mq.archive (
    id             bigint      PRIMARY KEY,
    mailbox        text        NOT NULL,
    sender         text        NOT NULL,
    kind           text        NOT NULL,
    correlation_id text,
    reply_to       text,
    body           jsonb       NOT NULL,
    created_at     timestamptz NOT NULL,
    attempts       integer     NOT NULL,
    acked_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX archive_mailbox_idx ON mq.archive (mailbox);

CREATE TABLE mq.dead_letters (
    id             bigint      PRIMARY KEY,
    mailbox        text        NOT NULL,
    sender         text        NOT NULL,
    kind           text        NOT NULL,
    correlation_id text,
    reply_to       text,
    body           jsonb       NOT NULL,
    created_at     timestamptz NOT NULL,
    attempts       integer     NOT NULL,
    error          text        NOT NULL,
    died_at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX dead_letters_mailbox_idx ON mq.dead_letters (mailbox);

-- How far the wire audit has scanned: every message with id <= scanned_through has been read by
-- an audit. Ids below it are all committed or rolled back (see mq.audit_horizon()).
CREATE TABLE mq.audit_state (
    singleton       boolean     PRIMARY KEY DEFAULT true CHECK (singleton),
    scanned_through bigint      NOT NULL DEFAULT 0,
    scanned_at      timestamptz
);
INSERT INTO mq.audit_state DEFAULT VALUES;

-- Sends hold this advisory lock in shared mode from before their ids are drawn until they
-- commit; the audit takes it exclusively for an instant to learn an id below which no send is
-- still in flight. Shared holders never wait for each other.
CREATE FUNCTION mq.audit_lock_key() RETURNS bigint LANGUAGE sql IMMUTABLE
    AS $$ SELECT 7361029384756102938 $$;

-- Sends a batch to one mailbox and wakes its receivers. Returns the new ids in input order.
CREATE FUNCTION mq.send(
    p_mailbox text, p_sender text, p_kind text, p_correlation_ids text[], p_reply_to text,
    p_bodies jsonb[]
) RETURNS SETOF bigint LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_advisory_xact_lock_shared(mq.audit_lock_key());
    RETURN QUERY
    INSERT INTO mq.messages (mailbox, sender, kind, correlation_id, reply_to, body)
    SELECT p_mailbox, p_sender, p_kind, c, p_reply_to, b
      FROM unnest(p_bodies, p_correlation_ids) WITH ORDINALITY AS u(b, c, n)
     ORDER BY n
    RETURNING id;
    -- Delivered at commit; receivers that miss it (reconnecting) poll as a fallback.
    PERFORM pg_notify('mq_messages', p_mailbox);
END $$;

-- Claims up to p_limit visible messages of a mailbox for p_lease_seconds, in one statement.
-- A message whose attempts are used up (its receivers kept dying without an ack) is not leased
-- again: it moves to the dead letters instead, so nothing is retried forever.
CREATE FUNCTION mq.claim(p_mailbox text, p_limit integer, p_lease_seconds double precision, p_max_attempts integer)
RETURNS SETOF mq.messages LANGUAGE sql AS $$
    WITH next AS (
        SELECT id, attempts FROM mq.messages
         WHERE mailbox = p_mailbox AND visible_at <= now()
         ORDER BY visible_at, id
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
        SELECT id, mailbox, sender, kind, correlation_id, reply_to, body, created_at, attempts,
               coalesce('gave up after ' || attempts || ' attempts; last error: ' || last_error,
                        'gave up after ' || attempts || ' attempts; the receiver never acked (lease expired)')
          FROM exhausted
    )
    UPDATE mq.messages m
       SET visible_at = clock_timestamp() + make_interval(secs => p_lease_seconds),
           attempts   = m.attempts + 1,
           lease      = nextval('mq.lease_seq')
      FROM next
     WHERE m.id = next.id AND next.attempts < p_max_attempts
    RETURNING m.*
$$;

-- The id below which every message is committed or rolled back: waits for sends in flight.
CREATE FUNCTION mq.audit_horizon() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    horizon bigint;
BEGIN
    PERFORM pg_advisory_xact_lock(mq.audit_lock_key());
    SELECT greatest(
        (SELECT coalesce(max(id), 0) FROM mq.messages),
        (SELECT coalesce(max(id), 0) FROM mq.archive),
        (SELECT coalesce(max(id), 0) FROM mq.dead_letters)) INTO horizon;
    RETURN horizon;
END $$;
