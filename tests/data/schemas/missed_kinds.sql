-- Issue 54's missed column kinds, one of each, with rows shaped like real ones: a fixture written
-- here (not a public schema), beside the public ones in tests/integration/policy_recall.rs.
CREATE TABLE people (
    id int PRIMARY KEY,
    first_name text NOT NULL,
    middle_initial char(1),
    last_name text NOT NULL,
    age int,
    tax_number text,
    profile jsonb,
    settings jsonb
);
INSERT INTO people
SELECT i,
       (ARRAY['Ada','Grace','Alan','Edsger','Barbara','Donald','Frances','John'])[1 + i % 8],
       chr(65 + i % 26),
       (ARRAY['Lovelace','Hopper','Turing','Dijkstra','Liskov','Knuth','Allen','Backus'])[1 + i % 8],
       18 + i % 70,
       lpad((100000000 + i * 7919)::text, 9, '0'),
       jsonb_build_object('display_name', (ARRAY['Ada Lovelace','Grace Hopper','Alan Turing'])[1 + i % 3] || ' ' || i,
                          'theme', (ARRAY['dark','light'])[1 + i % 2]),
       jsonb_build_object('otp', jsonb_build_object('totp_seed', upper(substr(md5(i::text), 1, 16))), 'lang', 'en')
  FROM generate_series(1, 80) i;
CREATE TABLE api_keys (id int PRIMARY KEY, owner_id int NOT NULL REFERENCES people, value text NOT NULL, created date NOT NULL);
INSERT INTO api_keys SELECT i, i, 'sk_live_' || md5('k' || i) || md5('x' || i), date '2024-01-01' + i FROM generate_series(1, 80) i;
CREATE TABLE sessions (session_key varchar(40) PRIMARY KEY, session_data text NOT NULL, expire_date timestamptz NOT NULL);
INSERT INTO sessions SELECT substr(md5('s' || i) || md5('t' || i), 1, 32), 'e30:' || md5(i::text), '2025-01-01'::timestamptz + i * interval '1 hour' FROM generate_series(1, 80) i;
CREATE TABLE mail_rules (id int PRIMARY KEY, subject text NOT NULL, bcc_emails text);
INSERT INTO mail_rules SELECT i, 'Invoice ' || i, 'billing' || i || '@corp.example, audit' || i || '@corp.example' FROM generate_series(1, 80) i;
CREATE TABLE socialaccount (id int PRIMARY KEY, provider text NOT NULL, uid varchar(191) NOT NULL, person_id int REFERENCES people);
INSERT INTO socialaccount SELECT i, (ARRAY['github','google'])[1 + i % 2], (10000000 + i * 7919)::text, i FROM generate_series(1, 80) i;
CREATE TABLE reversion_version (id int PRIMARY KEY, object_id text NOT NULL, object_repr text NOT NULL, serialized_data text NOT NULL);
INSERT INTO reversion_version SELECT i, i::text, (ARRAY['Ada Lovelace','Grace Hopper','Alan Turing'])[1 + i % 3] || ' (' || i || ')', '[{"model": "auth.user", "pk": ' || i || '}]' FROM generate_series(1, 80) i;
-- The publisher's sample (pubs): an employee id of initials, digits and a gender as the key.
CREATE TABLE employee (emp_id char(9) PRIMARY KEY, fname text NOT NULL, minit char(1), lname text NOT NULL, job_lvl int, hire_date date);
INSERT INTO employee SELECT chr(65 + i % 26) || chr(65 + (i * 7) % 26) || chr(65 + (i * 3) % 26) || lpad((10000 + i * 37)::text, 5, '0') || (ARRAY['M','F'])[1 + i % 2],
       (ARRAY['Paolo','Ann','Helen','Karin'])[1 + i % 4], chr(65 + i % 26), (ARRAY['Accorti','Devon','Bennett','Josephs'])[1 + i % 4], 10 + i % 200, date '1990-01-01' + i * 30
  FROM generate_series(1, 43) i;
