-- What a 10,000-row update costs the target, statement by statement: the plain UPDATE of the
-- rows (Postgres' own cost for those heap and index writes, which its subscriber also pays),
-- the consumer's upsert from text arrays (what it runs), the same from typed arrays, the same
-- with triggers off (as a subscriber's apply worker runs), and UPDATE ... FROM unnest. Each
-- after a CHECKPOINT, each rolled back. Run it on a target that stream-bench left behind:
--   target/release/stream-bench --maskbus target/release/maskbus --profile medium --keep
--   psql "$DATABASE_URL_WITHOUT_DBNAME/mbb_stream_target" -f bench/stream-apply-floor.sql
-- and read the `Time:` lines of the five statements that follow each `BEGIN`.
\timing on
CREATE TEMP TABLE arr AS
  SELECT array_agg(id::text ORDER BY id) a0, array_agg(account_id::text ORDER BY id) a1,
         array_agg(card_id::text ORDER BY id) a2, array_agg((amount + 1)::text ORDER BY id) a3,
         array_agg(posted_at::text ORDER BY id) a4, array_agg(merchant::text ORDER BY id) a5,
         array_agg(description ORDER BY id) a6
    FROM transactions WHERE id >= 70001 AND id < 80001;
CREATE TEMP TABLE arrt AS
  SELECT array_agg(id ORDER BY id) a0, array_agg(account_id ORDER BY id) a1,
         array_agg(card_id ORDER BY id) a2, array_agg((amount + 1) ORDER BY id) a3,
         array_agg(posted_at ORDER BY id) a4, array_agg(merchant ORDER BY id) a5,
         array_agg(description ORDER BY id) a6
    FROM transactions WHERE id >= 70001 AND id < 80001;

CHECKPOINT;
BEGIN;
UPDATE transactions SET amount = amount + 1 WHERE id >= 70001 AND id < 80001;
ROLLBACK;

-- The consumer's upsert, over the text arrays (arr) or the typed ones (arrt).
\set upsert_head 'INSERT INTO transactions (id, account_id, card_id, amount, posted_at, merchant, description) OVERRIDING SYSTEM VALUE'
\set upsert_tail 'ON CONFLICT (id) DO UPDATE SET account_id = EXCLUDED.account_id, card_id = EXCLUDED.card_id, amount = EXCLUDED.amount, posted_at = EXCLUDED.posted_at, merchant = EXCLUDED.merchant, description = EXCLUDED.description'
\set from_text 'SELECT u.c0::bigint, u.c1::bigint, u.c2::bigint, u.c3::numeric, u.c4::timestamptz, u.c5::varchar, u.c6::text FROM arr, unnest(arr.a0, arr.a1, arr.a2, arr.a3, arr.a4, arr.a5, arr.a6) AS u(c0, c1, c2, c3, c4, c5, c6)'
\set from_typed 'SELECT u.c0, u.c1, u.c2, u.c3, u.c4, u.c5, u.c6 FROM arrt, unnest(arrt.a0, arrt.a1, arrt.a2, arrt.a3, arrt.a4, arrt.a5, arrt.a6) AS u(c0, c1, c2, c3, c4, c5, c6)'

CHECKPOINT;
BEGIN;
:upsert_head :from_text :upsert_tail;
ROLLBACK;

CHECKPOINT;
BEGIN;
:upsert_head :from_typed :upsert_tail;
ROLLBACK;

CHECKPOINT;
BEGIN;
SET LOCAL session_replication_role = replica;
:upsert_head :from_text :upsert_tail;
ROLLBACK;

CHECKPOINT;
BEGIN;
UPDATE transactions t SET amount = u.c3::numeric
  FROM arr, unnest(arr.a0, arr.a1, arr.a2, arr.a3, arr.a4, arr.a5, arr.a6)
       AS u(c0, c1, c2, c3, c4, c5, c6)
 WHERE t.id = u.c0::bigint;
ROLLBACK;
