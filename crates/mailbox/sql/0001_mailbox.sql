-- The bus: one mailbox table that the producer and the consumer talk through.
-- The mailbox issue (crates/mailbox) extends it with leases, archive and dead letters.
CREATE SCHEMA IF NOT EXISTS mq;

CREATE TABLE mq.messages (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    mailbox        text        NOT NULL,
    sender         text        NOT NULL,
    kind           text        NOT NULL,
    correlation_id uuid,
    reply_to       text,
    body           jsonb       NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now()
);
