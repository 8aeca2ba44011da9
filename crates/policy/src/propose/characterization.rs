//! `propose` pinned down by example: what it proposed before its heuristics became a table
//! (tracker issue 50), written by running the code of the time and kept as literals, so a change
//! to a rule, a word or the order of the table that changes a proposal shows up here by name.

use super::{propose, ColumnFacts, Proposal};
use maskbus_pg::Column;

/// A column for each heuristic, each class of type it takes, each step its outcome takes with
/// the column's width, NULL and UNIQUE, and each kind of evidence where the kind decides (picked
/// from some thirteen million combinations of names, types, constraints and facts).
/// A column is `name | type(width) | not-null unique generated | facts`, and the line under it
/// is `-> rule | why`, with `| number` when the proposal marks a foreign key to a number.
const CASES: &str = r#"
about          | text                     |                 | people
    -> "redact" | free text about a person (a biography names them)
about          | text                     | unique          | people
    -> { pseudonym = "token" } | free text about a person (a biography names them); UNIQUE, so a unique fake
about          | text(3)                  |                 | people
    -> "null" | free text about a person (a biography names them)
about          | text(3)                  | not-null        | people
    -> "keep" | free text about a person (a biography names them); NOT NULL and no rule fits its type: review by hand
annual_salary  | integer                  |                 |
    -> "null" | what a person earns
annual_salary  | integer                  | not-null        |
    -> { constant = "0" } | what a person earns; NOT NULL, so 0
card_id        | text                     |                 |
    -> "card" | a card number by its name
card_id        | text                     | unique          |
    -> { pseudonym = "digits" } | a card number by its name; UNIQUE, so a unique fake of its digits
card_id        | text(3)                  |                 |
    -> "last_four" | a card number by its name
card_number    | bigint                   |                 | key, evidence=2 of 5 sampled values look like ip
    -> { pseudonym = "digits" } | key that looks like a person's number: a bijective fake of its digits, so the sync still pages and links by it (foreign keys to it get the same rule)
card_number    | bigint                   |                 | key, evidence=5 of 20 sampled values look like email
    -> { pseudonym = "digits" } | key that looks like a person's number: a bijective fake of its digits, so the sync still pages and links by it (foreign keys to it get the same rule)
card_number    | integer                  |                 | fk
    -> "keep" | foreign key: links must match the keys they point at | number
card_number    | integer                  |                 | key
    -> { pseudonym = "digits" } | key that looks like a person's number: a bijective fake of its digits, so the sync still pages and links by it (foreign keys to it get the same rule)
card_number    | text                     |                 | fk
    -> "keep" | foreign key: links must match the keys they point at | number
card_number    | text                     |                 | key
    -> { pseudonym = "digits" } | key that looks like a person's number: a bijective fake of its digits, so the sync still pages and links by it (foreign keys to it get the same rule)
card_number    | text                     |                 | key, evidence=2 of 5 sampled values look like ip
    -> { pseudonym = "digits" } | key that looks like a person's number: a bijective fake of its digits, so the sync still pages and links by it (foreign keys to it get the same rule)
card_number    | text                     |                 | key, evidence=5 of 20 sampled values look like email
    -> { pseudonym = "digits" } | key that looks like a person's number: a bijective fake of its digits, so the sync still pages and links by it (foreign keys to it get the same rule)
company_name   | text                     |                 | people
    -> "first_letter" | where a person works
company_name   | text                     | unique          | people
    -> { pseudonym = "token" } | where a person works; UNIQUE, so a unique fake
company_name   | text(4)                  | not-null unique | people
    -> "keep" | where a person works; NOT NULL and no rule fits its type: review by hand
company_name   | text(4)                  | unique          | people
    -> "null" | where a person works
customer_id    | ARRAY                    |                 |
    -> "keep" |
customer_id    | ARRAY                    |                 | evidence=3 of 9 sampled values look like ssn
    -> "scrub" | free text: 3 of 9 sampled values look like ssn; each element of an array
customer_id    | ARRAY                    |                 | secret-shape
    -> { pseudonym = "token" } | values shaped like secrets (long, random letters and digits): a keyed fake of letters, unique
customer_id    | ARRAY                    | not-null unique | evidence=3 of 9 sampled values look like ssn
    -> "keep" | looks like PII (3 of 9 sampled values look like ssn); NOT NULL and no rule fits its type: review by hand
customer_id    | ARRAY                    | not-null unique | evidence=4 of 8 sampled values look like card
    -> "keep" | looks like PII (4 of 8 sampled values look like card); NOT NULL and no rule fits its type: review by hand
customer_id    | ARRAY                    | not-null unique | evidence=6 of 6 sampled values look like phone
    -> "keep" | looks like PII (6 of 6 sampled values look like phone); NOT NULL and no rule fits its type: review by hand
customer_id    | ARRAY                    | not-null unique | evidence=7 of 9 sampled values look like account
    -> "keep" | looks like PII (7 of 9 sampled values look like account); NOT NULL and no rule fits its type: review by hand
customer_id    | ARRAY(10)                | not-null        | secret-shape
    -> "redact" | values shaped like secrets (long, random letters and digits)
customer_id    | bigint                   |                 | fk, evidence=3 of 9 sampled values look like ssn
    -> "keep" | foreign key: links must match the keys they point at; it looks like PII: review (a key is passed as it is) | number
customer_id    | bigint                   |                 | fk, evidence=4 of 8 sampled values look like card
    -> "keep" | foreign key: links must match the keys they point at; it looks like PII: review (a key is passed as it is) | number
customer_id    | bigint                   |                 | fk, evidence=6 of 6 sampled values look like phone
    -> "keep" | foreign key: links must match the keys they point at; it looks like PII: review (a key is passed as it is) | number
customer_id    | bigint                   |                 | fk, evidence=7 of 9 sampled values look like account
    -> "keep" | foreign key: links must match the keys they point at; it looks like PII: review (a key is passed as it is) | number
customer_id    | bigint                   |                 | key, evidence=3 of 9 sampled values look like ssn
    -> { pseudonym = "ssn" } | key that looks like an SSN: a bijective fake of its digits, so the sync still pages and links by it (foreign keys to it get the same rule)
customer_id    | bigint                   |                 | key, evidence=4 of 8 sampled values look like card
    -> { pseudonym = "digits" } | key that looks like a person's number: a bijective fake of its digits, so the sync still pages and links by it (foreign keys to it get the same rule)
customer_id    | bigint                   |                 | key, evidence=6 of 6 sampled values look like phone
    -> { pseudonym = "digits" } | key that looks like a person's number: a bijective fake of its digits, so the sync still pages and links by it (foreign keys to it get the same rule)
customer_id    | bigint                   |                 | key, evidence=7 of 9 sampled values look like account
    -> { pseudonym = "digits" } | key that looks like a person's number: a bijective fake of its digits, so the sync still pages and links by it (foreign keys to it get the same rule)
customer_id    | bytea                    |                 |
    -> "keep" |
customer_id    | bytea                    |                 | evidence=3 of 9 sampled values look like ssn
    -> "null" | looks like PII (3 of 9 sampled values look like ssn)
customer_id    | bytea                    |                 | evidence=4 of 8 sampled values look like card
    -> "null" | looks like PII (4 of 8 sampled values look like card)
customer_id    | bytea                    |                 | evidence=6 of 6 sampled values look like phone
    -> "null" | looks like PII (6 of 6 sampled values look like phone)
customer_id    | bytea                    |                 | evidence=7 of 9 sampled values look like account
    -> "null" | looks like PII (7 of 9 sampled values look like account)
customer_id    | bytea                    |                 | people
    -> "null" | bytes kept about a person
customer_id    | bytea                    | not-null        | evidence=2 of 5 sampled values look like ip
    -> { constant = "\\x" } | looks like PII (2 of 5 sampled values look like ip); NOT NULL, so empty bytes
customer_id    | bytea                    | not-null        | evidence=3 of 9 sampled values look like ssn
    -> { constant = "\\x" } | looks like PII (3 of 9 sampled values look like ssn); NOT NULL, so empty bytes
customer_id    | bytea                    | not-null        | evidence=4 of 8 sampled values look like card
    -> { constant = "\\x" } | looks like PII (4 of 8 sampled values look like card); NOT NULL, so empty bytes
customer_id    | bytea                    | not-null        | evidence=5 of 20 sampled values look like email
    -> { constant = "\\x" } | looks like PII (5 of 20 sampled values look like email); NOT NULL, so empty bytes
customer_id    | bytea                    | not-null        | evidence=6 of 6 sampled values look like phone
    -> { constant = "\\x" } | looks like PII (6 of 6 sampled values look like phone); NOT NULL, so empty bytes
customer_id    | bytea                    | not-null        | evidence=7 of 9 sampled values look like account
    -> { constant = "\\x" } | looks like PII (7 of 9 sampled values look like account); NOT NULL, so empty bytes
customer_id    | bytea                    | not-null        | people
    -> { constant = "\\x" } | bytes kept about a person; NOT NULL, so empty bytes
customer_id    | bytea                    | not-null        | secret-shape
    -> { constant = "\\x" } | values shaped like secrets (long, random letters and digits); NOT NULL, so empty bytes
customer_id    | cidr                     | not-null        |
    -> { constant = "192.0.2.1" } | a network address identifies a device; NOT NULL, so a documentation address
customer_id    | date                     |                 |
    -> "keep" |
customer_id    | inet                     |                 |
    -> "null" | a network address identifies a device
customer_id    | inet                     | not-null        |
    -> { constant = "192.0.2.1" } | a network address identifies a device; NOT NULL, so a documentation address
customer_id    | integer                  |                 |
    -> "keep" |
customer_id    | jsonb                    |                 |
    -> "keep" |
customer_id    | jsonb                    |                 | evidence=3 of 9 sampled values look like ssn
    -> { json = {} } | JSON whose values look like PII (3 of 9 sampled values look like ssn): every leaf and key scrubbed; name paths to keep what is safe
customer_id    | macaddr                  |                 |
    -> "null" | a network address identifies a device
customer_id    | macaddr                  | not-null        |
    -> { constant = "00:00:5e:00:53:00" } | a network address identifies a device; NOT NULL, so a documentation address
customer_id    | macaddr8                 |                 |
    -> "null" | a network address identifies a device
customer_id    | macaddr8                 | not-null        |
    -> "keep" | a network address identifies a device; NOT NULL and no rule fits its type: review by hand
customer_id    | text                     |                 |
    -> "keep" |
customer_id    | text                     |                 | evidence=3 of 9 sampled values look like ssn
    -> "scrub" | free text: 3 of 9 sampled values look like ssn; each element of an array
customer_id    | text                     |                 | fk
    -> "keep" | foreign key: links must match the keys they point at
customer_id    | text                     |                 | fk, evidence=3 of 9 sampled values look like ssn
    -> "keep" | foreign key: links must match the keys they point at; it looks like PII: review (a key is passed as it is) | number
customer_id    | text                     |                 | fk, evidence=4 of 8 sampled values look like card
    -> "keep" | foreign key: links must match the keys they point at; it looks like PII: review (a key is passed as it is) | number
customer_id    | text                     |                 | fk, evidence=6 of 6 sampled values look like phone
    -> "keep" | foreign key: links must match the keys they point at; it looks like PII: review (a key is passed as it is) | number
customer_id    | text                     |                 | fk, evidence=7 of 9 sampled values look like account
    -> "keep" | foreign key: links must match the keys they point at; it looks like PII: review (a key is passed as it is) | number
customer_id    | text                     |                 | key
    -> "keep" | key: the sync pages and upserts by it
customer_id    | text                     |                 | key, evidence=3 of 9 sampled values look like ssn
    -> { pseudonym = "ssn" } | key that looks like an SSN: a bijective fake of its digits, so the sync still pages and links by it (foreign keys to it get the same rule)
customer_id    | text                     |                 | key, evidence=4 of 8 sampled values look like card
    -> { pseudonym = "digits" } | key that looks like a person's number: a bijective fake of its digits, so the sync still pages and links by it (foreign keys to it get the same rule)
customer_id    | text                     |                 | key, evidence=6 of 6 sampled values look like phone
    -> { pseudonym = "digits" } | key that looks like a person's number: a bijective fake of its digits, so the sync still pages and links by it (foreign keys to it get the same rule)
customer_id    | text                     |                 | key, evidence=7 of 9 sampled values look like account
    -> { pseudonym = "digits" } | key that looks like a person's number: a bijective fake of its digits, so the sync still pages and links by it (foreign keys to it get the same rule)
customer_id    | text                     |                 | secret-shape
    -> { pseudonym = "token" } | values shaped like secrets (long, random letters and digits): a keyed fake of letters, unique
customer_id    | text                     |                 | spells=4 of 10 sampled rows
    -> "redact" | values hold the row's own name (4 of 10 sampled rows)
customer_id    | text                     | generated       |
    ->  | generated: the target computes it from the masked columns; no rule needed
customer_id    | text                     | not-null unique | evidence=2 of 5 sampled values look like ip
    -> { pseudonym = "token" } | looks like PII (2 of 5 sampled values look like ip); UNIQUE, so a unique fake
customer_id    | text                     | unique          | evidence=2 of 5 sampled values look like ip
    -> "null" | looks like PII (2 of 5 sampled values look like ip)
customer_id    | text                     | unique          | evidence=3 of 9 sampled values look like ssn
    -> { pseudonym = "digits" } | UNIQUE, values look like numbers of a person (3 of 9 sampled values look like ssn): a unique fake of their digits
customer_id    | text                     | unique          | evidence=4 of 8 sampled values look like card
    -> { pseudonym = "digits" } | UNIQUE, values look like numbers of a person (4 of 8 sampled values look like card): a unique fake of their digits
customer_id    | text                     | unique          | evidence=5 of 20 sampled values look like email
    -> { pseudonym = "email" } | UNIQUE, values look like emails (5 of 20 sampled values look like email): a unique fake that fits
customer_id    | text                     | unique          | evidence=6 of 6 sampled values look like phone
    -> { pseudonym = "digits" } | UNIQUE, values look like numbers of a person (6 of 6 sampled values look like phone): a unique fake of their digits
customer_id    | text                     | unique          | evidence=7 of 9 sampled values look like account
    -> { pseudonym = "digits" } | UNIQUE, values look like numbers of a person (7 of 9 sampled values look like account): a unique fake of their digits
customer_id    | text                     | unique          | spells=4 of 10 sampled rows
    -> { pseudonym = "token" } | values hold the row's own name (4 of 10 sampled rows); UNIQUE, so a unique fake
customer_id    | text(10)                 | not-null        | secret-shape
    -> "redact" | values shaped like secrets (long, random letters and digits)
customer_id    | text(12)                 | not-null unique | evidence=5 of 20 sampled values look like email
    -> { pseudonym = "token" } | looks like PII (5 of 20 sampled values look like email); UNIQUE, so a unique fake
customer_id    | text(4)                  |                 | secret-shape
    -> "null" | values shaped like secrets (long, random letters and digits)
customer_id    | text(4)                  |                 | spells=4 of 10 sampled rows
    -> "first_letter" | values hold the row's own name (4 of 10 sampled rows)
customer_id    | text(4)                  | not-null        | secret-shape
    -> "keep" | values shaped like secrets (long, random letters and digits); NOT NULL and no rule fits its type: review by hand
customer_id    | text(4)                  | not-null unique | evidence=2 of 5 sampled values look like ip
    -> "keep" | looks like PII (2 of 5 sampled values look like ip); NOT NULL and no rule fits its type: review by hand
customer_id    | text(4)                  | not-null unique | evidence=5 of 20 sampled values look like email
    -> "keep" | looks like PII (5 of 20 sampled values look like email); NOT NULL and no rule fits its type: review by hand
customer_id    | text(4)                  | not-null unique | spells=4 of 10 sampled rows
    -> "keep" | values hold the row's own name (4 of 10 sampled rows); NOT NULL and no rule fits its type: review by hand
customer_id    | text(4)                  | unique          | evidence=5 of 20 sampled values look like email
    -> "null" | looks like PII (5 of 20 sampled values look like email)
customer_id    | text(4)                  | unique          | spells=4 of 10 sampled rows
    -> "null" | values hold the row's own name (4 of 10 sampled rows)
customer_id    | timestamp with time zone |                 |
    -> "keep" |
customer_id    | uuid                     |                 |
    -> "keep" |
date_of_birth  | ARRAY                    | not-null        |
    -> "redact" | a birth date by its name, not of type date
date_of_birth  | bytea                    | not-null        |
    -> { constant = "\\x" } | a birth date by its name, not of type date; NOT NULL, so empty bytes
date_of_birth  | date                     |                 |
    -> "year_only" | a birth date: the year is kept
date_of_birth  | text                     |                 |
    -> "null" | a birth date by its name, not of type date
date_of_birth  | text                     | not-null        |
    -> "redact" | a birth date by its name, not of type date
date_of_birth  | text                     | not-null unique |
    -> { pseudonym = "token" } | a birth date by its name, not of type date; UNIQUE, so a unique fake
date_of_birth  | text(3)                  | not-null        |
    -> "keep" | a birth date by its name, not of type date; NOT NULL and no rule fits its type: review by hand
date_of_birth  | timestamp with time zone |                 |
    -> "year_only" | a birth date: the year is kept
device_id      | text                     |                 |
    -> "redact" | identifies a device by its name
device_id      | text                     | unique          |
    -> { pseudonym = "token" } | identifies a device by its name; UNIQUE, so a unique fake
device_id      | text(3)                  | not-null unique |
    -> "keep" | identifies a device by its name; NOT NULL and no rule fits its type: review by hand
device_id      | text(3)                  | unique          |
    -> "null" | identifies a device by its name
email_address  | text                     |                 |
    -> "email" | an email by its name
email_address  | text                     | unique          |
    -> { pseudonym = "email" } | an email by its name; UNIQUE, so a unique fake
first_name     | text                     |                 |
    -> { pseudonym = "first_name" } | a first name by its name
first_name     | text                     | unique          |
    -> { pseudonym = "token" } | a name by its name; UNIQUE, so a unique fake
first_name     | text(3)                  |                 |
    -> "first_letter" | a name by its name
first_name     | text(3)                  | not-null unique |
    -> "keep" | a name by its name; NOT NULL and no rule fits its type: review by hand
first_name     | text(3)                  | unique          |
    -> "null" | a name by its name
geo_location   | ARRAY                    | not-null        |
    -> "redact" | a location identifies where a person is
geo_location   | bytea                    | not-null        |
    -> { constant = "\\x" } | a location identifies where a person is; NOT NULL, so empty bytes
geo_location   | integer                  |                 |
    -> "null" | a location identifies where a person is
geo_location   | integer                  | not-null        |
    -> { constant = "0" } | a location identifies where a person is; NOT NULL, so 0
geo_location   | text                     |                 |
    -> "null" | a location identifies where a person is
geo_location   | text                     | not-null        |
    -> "redact" | a location identifies where a person is
geo_location   | text                     | not-null unique |
    -> { pseudonym = "token" } | a location identifies where a person is; UNIQUE, so a unique fake
geo_location   | text(3)                  | not-null        |
    -> "keep" | a location identifies where a person is; NOT NULL and no rule fits its type: review by hand
iban_id        | text                     |                 |
    -> "last_four" | an account or routing number by its name
iban_id        | text                     | unique          |
    -> { pseudonym = "digits" } | an account or routing number by its name; UNIQUE, so a unique fake of its digits
ip_address     | ARRAY                    | not-null        |
    -> "redact" | a network address identifies a device
ip_address     | bytea                    | not-null        |
    -> { constant = "\\x" } | a network address identifies a device; NOT NULL, so empty bytes
ip_address     | text                     | not-null        |
    -> "redact" | a network address identifies a device
ip_address     | text                     | not-null unique |
    -> { pseudonym = "token" } | a network address identifies a device; UNIQUE, so a unique fake
ip_address     | text(3)                  | not-null        |
    -> "keep" | a network address identifies a device; NOT NULL and no rule fits its type: review by hand
last_name      | text                     |                 |
    -> { pseudonym = "last_name" } | a last name by its name
middle_name    | text                     |                 |
    -> "first_letter" | a person's name
middle_name    | text                     | unique          |
    -> { pseudonym = "token" } | a person's name; UNIQUE, so a unique fake
middle_name    | text(4)                  | not-null unique |
    -> "keep" | a person's name; NOT NULL and no rule fits its type: review by hand
middle_name    | text(4)                  | unique          |
    -> "null" | a person's name
national_id    | text                     |                 |
    -> "last_four" | a national or tax identifier by its name
national_id    | text                     | unique          |
    -> { pseudonym = "digits" } | a national or tax identifier by its name; UNIQUE, so a unique fake of its digits
password_hash  | ARRAY                    |                 |
    -> { pseudonym = "token" } | a secret by its name: a keyed fake of letters, unique
password_hash  | ARRAY(10)                | not-null        |
    -> "redact" | a secret by its name
password_hash  | bytea                    | not-null        |
    -> { constant = "\\x" } | a secret by its name; NOT NULL, so empty bytes
password_hash  | text                     |                 |
    -> { pseudonym = "token" } | a secret by its name: a keyed fake of letters, unique
password_hash  | text(10)                 | not-null        |
    -> "redact" | a secret by its name
password_hash  | text(3)                  |                 |
    -> "null" | a secret by its name
password_hash  | text(3)                  | not-null        |
    -> "keep" | a secret by its name; NOT NULL and no rule fits its type: review by hand
phone_id       | text                     |                 |
    -> "last_four" | a phone number by its name
phone_id       | text                     | unique          |
    -> { pseudonym = "digits" } | a phone number by its name; UNIQUE, so a unique fake of its digits
photo_path     | bytea                    |                 |
    -> "null" | an image or document of a person
photo_path     | bytea                    | not-null        |
    -> { constant = "\\x" } | an image or document of a person; NOT NULL, so empty bytes
photo_path     | text                     |                 | people
    -> "redact" | where a person's picture or document is: it often spells the name
photo_path     | text                     | unique          | people
    -> { pseudonym = "token" } | where a person's picture or document is: it often spells the name; UNIQUE, so a unique fake
photo_path     | text(3)                  | not-null unique | people
    -> "keep" | where a person's picture or document is: it often spells the name; NOT NULL and no rule fits its type: review by hand
photo_path     | text(3)                  | unique          | people
    -> "null" | where a person's picture or document is: it often spells the name
postal_code    | text                     |                 |
    -> "redact" | a postal code: it narrows a person down to a street
postal_code    | text                     | unique          |
    -> { pseudonym = "token" } | a postal code: it narrows a person down to a street; UNIQUE, so a unique fake
postal_code    | text(3)                  |                 |
    -> "first_letter" | a postal code: it narrows a person down to a street
postal_code    | text(3)                  | not-null unique |
    -> "keep" | a postal code: it narrows a person down to a street; NOT NULL and no rule fits its type: review by hand
postal_code    | text(3)                  | unique          |
    -> "null" | a postal code: it narrows a person down to a street
ssn_id         | text                     |                 |
    -> "ssn" | an SSN by its name
ssn_id         | text                     |                 | fk
    -> "keep" | foreign key: links must match the keys they point at; it looks like PII: review (a key is passed as it is)
ssn_id         | text                     |                 | key
    -> "keep" | key: the sync pages and upserts by it; it looks like PII: review (a key is passed as it is)
ssn_id         | text                     | unique          |
    -> { pseudonym = "digits" } | an SSN by its name; UNIQUE, so a unique fake of its digits
ssn_id         | text(3)                  |                 |
    -> "last_four" | an SSN by its name
ssn_number     | bigint                   |                 | fk, evidence=2 of 5 sampled values look like ip
    -> "keep" | foreign key: links must match the keys they point at; it looks like PII: review (a key is passed as it is) | number
ssn_number     | bigint                   |                 | fk, evidence=5 of 20 sampled values look like email
    -> "keep" | foreign key: links must match the keys they point at; it looks like PII: review (a key is passed as it is) | number
ssn_number     | bigint                   |                 | key, evidence=2 of 5 sampled values look like ip
    -> { pseudonym = "ssn" } | key that looks like an SSN: a bijective fake of its digits, so the sync still pages and links by it (foreign keys to it get the same rule)
ssn_number     | bigint                   |                 | key, evidence=4 of 8 sampled values look like card
    -> { pseudonym = "ssn" } | key that looks like an SSN: a bijective fake of its digits, so the sync still pages and links by it (foreign keys to it get the same rule)
ssn_number     | bigint                   |                 | key, evidence=5 of 20 sampled values look like email
    -> { pseudonym = "ssn" } | key that looks like an SSN: a bijective fake of its digits, so the sync still pages and links by it (foreign keys to it get the same rule)
ssn_number     | bigint                   |                 | key, evidence=6 of 6 sampled values look like phone
    -> { pseudonym = "ssn" } | key that looks like an SSN: a bijective fake of its digits, so the sync still pages and links by it (foreign keys to it get the same rule)
ssn_number     | bigint                   |                 | key, evidence=7 of 9 sampled values look like account
    -> { pseudonym = "ssn" } | key that looks like an SSN: a bijective fake of its digits, so the sync still pages and links by it (foreign keys to it get the same rule)
ssn_number     | integer                  |                 | fk
    -> "keep" | foreign key: links must match the keys they point at; it looks like PII: review (a key is passed as it is) | number
ssn_number     | integer                  |                 | key
    -> { pseudonym = "ssn" } | key that looks like an SSN: a bijective fake of its digits, so the sync still pages and links by it (foreign keys to it get the same rule)
ssn_number     | text                     |                 | fk
    -> "keep" | foreign key: links must match the keys they point at; it looks like PII: review (a key is passed as it is) | number
ssn_number     | text                     |                 | fk, evidence=2 of 5 sampled values look like ip
    -> "keep" | foreign key: links must match the keys they point at; it looks like PII: review (a key is passed as it is) | number
ssn_number     | text                     |                 | fk, evidence=5 of 20 sampled values look like email
    -> "keep" | foreign key: links must match the keys they point at; it looks like PII: review (a key is passed as it is) | number
ssn_number     | text                     |                 | key
    -> { pseudonym = "ssn" } | key that looks like an SSN: a bijective fake of its digits, so the sync still pages and links by it (foreign keys to it get the same rule)
ssn_number     | text                     |                 | key, evidence=2 of 5 sampled values look like ip
    -> { pseudonym = "ssn" } | key that looks like an SSN: a bijective fake of its digits, so the sync still pages and links by it (foreign keys to it get the same rule)
ssn_number     | text                     |                 | key, evidence=4 of 8 sampled values look like card
    -> { pseudonym = "ssn" } | key that looks like an SSN: a bijective fake of its digits, so the sync still pages and links by it (foreign keys to it get the same rule)
ssn_number     | text                     |                 | key, evidence=5 of 20 sampled values look like email
    -> { pseudonym = "ssn" } | key that looks like an SSN: a bijective fake of its digits, so the sync still pages and links by it (foreign keys to it get the same rule)
ssn_number     | text                     |                 | key, evidence=6 of 6 sampled values look like phone
    -> { pseudonym = "ssn" } | key that looks like an SSN: a bijective fake of its digits, so the sync still pages and links by it (foreign keys to it get the same rule)
ssn_number     | text                     |                 | key, evidence=7 of 9 sampled values look like account
    -> { pseudonym = "ssn" } | key that looks like an SSN: a bijective fake of its digits, so the sync still pages and links by it (foreign keys to it get the same rule)
street_address | text                     |                 |
    -> "redact" | a street address by its name
street_address | text                     | unique          |
    -> { pseudonym = "token" } | a street address by its name; UNIQUE, so a unique fake
street_address | text(3)                  |                 |
    -> "first_letter" | a street address by its name
street_address | text(3)                  | not-null unique |
    -> "keep" | a street address by its name; NOT NULL and no rule fits its type: review by hand
street_address | text(3)                  | unique          |
    -> "null" | a street address by its name
user_id        | text                     |                 |
    -> "first_letter" | a user name: it often spells the person
user_id        | text                     | unique          |
    -> { pseudonym = "token" } | a user name: it often spells the person; UNIQUE, so a unique fake
user_id        | text(3)                  | not-null unique |
    -> "keep" | a user name: it often spells the person; NOT NULL and no rule fits its type: review by hand
user_id        | text(3)                  | unique          |
    -> "null" | a user name: it often spells the person
"#;

/// The vocabulary: every word of the table and a few names made of them, as six kinds of column
/// (`type | constraints | facts`), grouped by what each is proposed.
const VOCABULARY: &str = r#"
text | |
  -> "keep" |
      customer_id account_id paid valid product_name category_name company_name Name card_type
      card_brand card_count card_status card_network card_issuer account_type account_name
      annual_salary bonus_amount business_name city country photo_path Photo avatar_url image_url
      payload data metadata settings alias title amount total quantity created_at updated_at code
      sku price about access account acct agent api applicant attachment attendee author avatar
      bank beneficiary bigint bill billing bio biography bonus brand business buyer bytea
      cardholder character cidr citext client comment comments company companyname compensation
      contact count customer cv date description details digest display document driver emergency
      employee employer encryption ext extension family feedback first full given guest hash
      headshot history holder id image income inet integer issuer json jsonb key keys kind last
      legal maiden manager member memo message middle name narrative network nick no note notes nr
      num number numeric obituary organisation organization owner parent pass passenger patient
      payee payer payroll pension person photo picture portrait private profile real receiver
      recipient recovery remarks rep resume review salary scan selfie seller sender ship shipping
      signature signer signing smallint spouse status story student summary teacher text thumbnail
      timestamp type user wage wages workplace
  -> "card" | a card number by its name
      card_id CardID card_number credit_card cc_num cards card cardnumber cc ccnum ccnumber
      creditcard pan
  -> "first_letter" | a user name: it often spells the person
      user_id user_name screen_name gamer_tag gamertag handle login nickname screenname userid
      username
  -> "ssn" | an SSN by its name
      ssn_id ssn_number SSNNumber social_security_number socialsecurity ssn
  -> "last_four" | a phone number by its name
      phone_id phone_number phones phone_ext home_phone mobile_number fax_no cell_phone cell
      cellphone fax mobile msisdn phone tel telefon telephone whatsapp
  -> "last_four" | an account or routing number by its name
      iban_id account_number account_no acct_no bank_nr bank_num routing_number sort_code aba
      accountnumber acctno bic iban routing sortcode swift
  -> { pseudonym = "first_name" } | a first name by its name
      first_name FirstName given_name firstname fname forename givenname prenom vorname
  -> { pseudonym = "last_name" } | a last name by its name
      last_name LastName family_name maiden_name full_name familyname fullname lastname legalname
      lname maidenname nachname realname surname
  -> "first_letter" | a person's name
      middle_name contact_name ShipName customer_name display_name contactname customername
      displayname employeename middlename personname
  -> "email" | an email by its name
      email_address EmailAddress customer_email_address work_email emails e_mail mail_to email
      emailaddress mail
  -> "last_four" | a national or tax identifier by its name
      national_id tax_id vat_number drivers_license license_plate driverslicense ein idcard
      identitycard idnumber itin licence license nationalid nationalidentity nhs nin passport
      personalnumber sin taxid tin vat vatnumber
  -> "null" | a birth date by its name, not of type date
      date_of_birth BirthDate birth_year born_on bday birth birthdate birthday born dob
  -> "null" | a network address identifies a device
      ip_address ipAddress client_ip remote_addr mac_address last_login_ip clientip ip ipaddr
      ipaddress ipv4 ipv6 mac macaddr macaddr8 macaddress remoteaddr
  -> "null" | a location identifies where a person is
      geo_location gps_coords coordinates coords geo geolocation gps lat latitude lng lon longitude
  -> "redact" | identifies a device by its name
      device_id deviceFingerprint user_agent serial_number device deviceid fingerprint imei
      serialnumber udid useragent
  -> "redact" | a street address by its name
      street_address address_line1 house_number addr address addressline apartment housenumber
      line1 line2 street streetaddress suite
  -> "redact" | a postal code: it narrows a person down to a street
      postal_code zip_code PostalCode plz postal postalcode postcode zip zipcode
  -> { pseudonym = "token" } | a secret by its name: a keyed fake of letters, unique
      password_hash passwordHash api_key apiKey private_key access_key secret_key signing_key
      encryption_key recovery_keys hmac_key access_token refresh_token mfa_secret session_id
      pin_hash pin_digest pass_hash accesskey apikey cookie credential credentials cvc cvv hmac mfa
      nonce otp passphrase passwd password pin privatekey pwd salt secret secretkey seed session
      sessionid token totp
text | | people
  -> "keep" |
      customer_id account_id paid valid product_name category_name card_type card_brand card_count
      card_status card_network card_issuer account_type account_name annual_salary bonus_amount
      city country payload data metadata settings alias title amount total quantity created_at
      updated_at code sku price access account acct agent api applicant attendee author bank
      beneficiary bigint bill billing bonus brand buyer bytea cardholder character cidr citext
      client compensation contact count customer date digest display driver emergency employee
      encryption family first full given guest hash holder id income inet integer issuer json jsonb
      key keys kind last legal maiden manager member middle network nick no nr num number numeric
      owner parent pass passenger patient payee payer payroll pension person private real receiver
      recipient recovery rep salary seller sender ship shipping signer signing smallint spouse
      status student teacher text timestamp type user wage wages
  -> "card" | a card number by its name
      card_id CardID card_number credit_card cc_num cards card cardnumber cc ccnum ccnumber
      creditcard pan
  -> "first_letter" | a user name: it often spells the person
      user_id user_name screen_name gamer_tag gamertag handle login nickname screenname userid
      username
  -> "ssn" | an SSN by its name
      ssn_id ssn_number SSNNumber social_security_number socialsecurity ssn
  -> "last_four" | a phone number by its name
      phone_id phone_number phones phone_ext home_phone mobile_number fax_no cell_phone cell
      cellphone ext extension fax mobile msisdn phone tel telefon telephone whatsapp
  -> "last_four" | an account or routing number by its name
      iban_id account_number account_no acct_no bank_nr bank_num routing_number sort_code aba
      accountnumber acctno bic iban routing sortcode swift
  -> { pseudonym = "first_name" } | a first name by its name
      first_name FirstName given_name firstname fname forename givenname prenom vorname
  -> { pseudonym = "last_name" } | a last name by its name
      last_name LastName family_name maiden_name full_name familyname fullname lastname legalname
      lname maidenname nachname realname surname
  -> "first_letter" | a person's name
      middle_name contact_name ShipName customer_name Name display_name contactname customername
      displayname employeename middlename name personname
  -> "first_letter" | where a person works
      company_name business_name business company companyname employer organisation organization
      workplace
  -> "email" | an email by its name
      email_address EmailAddress customer_email_address work_email emails e_mail mail_to email
      emailaddress mail
  -> "last_four" | a national or tax identifier by its name
      national_id tax_id vat_number drivers_license license_plate driverslicense ein idcard
      identitycard idnumber itin licence license nationalid nationalidentity nhs nin passport
      personalnumber sin taxid tin vat vatnumber
  -> "null" | a birth date by its name, not of type date
      date_of_birth BirthDate birth_year born_on bday birth birthdate birthday born dob
  -> "null" | a network address identifies a device
      ip_address ipAddress client_ip remote_addr mac_address last_login_ip clientip ip ipaddr
      ipaddress ipv4 ipv6 mac macaddr macaddr8 macaddress remoteaddr
  -> "null" | a location identifies where a person is
      geo_location gps_coords coordinates coords geo geolocation gps lat latitude lng lon longitude
  -> "redact" | identifies a device by its name
      device_id deviceFingerprint user_agent serial_number device deviceid fingerprint imei
      serialnumber udid useragent
  -> "redact" | a street address by its name
      street_address address_line1 house_number addr address addressline apartment housenumber
      line1 line2 street streetaddress suite
  -> "redact" | a postal code: it narrows a person down to a street
      postal_code zip_code PostalCode plz postal postalcode postcode zip zipcode
  -> "redact" | where a person's picture or document is: it often spells the name
      photo_path Photo avatar_url image_url attachment avatar cv document headshot image photo
      picture portrait resume scan selfie signature thumbnail
  -> { pseudonym = "token" } | a secret by its name: a keyed fake of letters, unique
      password_hash passwordHash api_key apiKey private_key access_key secret_key signing_key
      encryption_key recovery_keys hmac_key access_token refresh_token mfa_secret session_id
      pin_hash pin_digest pass_hash accesskey apikey cookie credential credentials cvc cvv hmac mfa
      nonce otp passphrase passwd password pin privatekey pwd salt secret secretkey seed session
      sessionid token totp
  -> "redact" | free text about a person (a biography names them)
      about bio biography comment comments description details feedback history memo message
      narrative note notes obituary profile remarks review story summary
bytea | | people
  -> "null" | bytes kept about a person
      customer_id card_id CardID user_id ssn_id phone_id account_id iban_id paid valid first_name
      FirstName given_name last_name LastName family_name maiden_name middle_name contact_name
      ShipName customer_name product_name category_name company_name Name full_name display_name
      email_address EmailAddress customer_email_address work_email emails e_mail mail_to ssn_number
      SSNNumber social_security_number national_id tax_id vat_number drivers_license license_plate
      card_number credit_card card_type card_brand card_count card_status card_network card_issuer
      cc_num cards account_number account_no acct_no bank_nr bank_num account_type account_name
      routing_number sort_code phone_number phones phone_ext home_phone mobile_number fax_no
      cell_phone annual_salary bonus_amount device_id deviceFingerprint user_agent serial_number
      user_name screen_name gamer_tag business_name street_address address_line1 house_number city
      country postal_code zip_code PostalCode payload data metadata settings alias title amount
      total quantity created_at updated_at code sku price aba about access account accountnumber
      acct acctno addr address addressline agent apartment api applicant attendee author bank
      beneficiary bic bigint bill billing bio biography bonus brand business buyer bytea card
      cardholder cardnumber cc ccnum ccnumber cell cellphone character cidr citext client comment
      comments company companyname compensation contact contactname count creditcard customer
      customername date description details device deviceid digest display displayname driver
      driverslicense ein email emailaddress emergency employee employeename employer encryption ext
      extension family familyname fax feedback fingerprint first firstname fname forename full
      fullname gamertag given givenname guest handle hash history holder housenumber iban id idcard
      identitycard idnumber imei income inet integer issuer itin json jsonb key keys kind last
      lastname legal legalname licence license line1 line2 lname login maiden maidenname mail
      manager member memo message middle middlename mobile msisdn nachname name narrative
      nationalid nationalidentity network nhs nick nickname nin no note notes nr num number numeric
      obituary organisation organization owner pan parent pass passenger passport patient payee
      payer payroll pension person personalnumber personname phone plz postal postalcode postcode
      prenom private profile real realname receiver recipient recovery remarks rep review routing
      salary screenname seller sender serialnumber ship shipping signer signing sin smallint
      socialsecurity sortcode spouse ssn status story street streetaddress student suite summary
      surname swift taxid teacher tel telefon telephone text timestamp tin type udid user useragent
      userid username vat vatnumber vorname wage wages whatsapp workplace zip zipcode
  -> "null" | a birth date by its name, not of type date
      date_of_birth BirthDate birth_year born_on bday birth birthdate birthday born dob
  -> "null" | a network address identifies a device
      ip_address ipAddress client_ip remote_addr mac_address last_login_ip clientip ip ipaddr
      ipaddress ipv4 ipv6 mac macaddr macaddr8 macaddress remoteaddr
  -> "null" | a location identifies where a person is
      geo_location gps_coords coordinates coords geo geolocation gps lat latitude lng lon longitude
  -> "null" | an image or document of a person
      photo_path Photo avatar_url image_url attachment avatar cv document headshot image photo
      picture portrait resume scan selfie signature thumbnail
  -> "null" | a secret by its name
      password_hash passwordHash api_key apiKey private_key access_key secret_key signing_key
      encryption_key recovery_keys hmac_key access_token refresh_token mfa_secret session_id
      pin_hash pin_digest pass_hash accesskey apikey cookie credential credentials cvc cvv hmac mfa
      nonce otp passphrase passwd password pin privatekey pwd salt secret secretkey seed session
      sessionid token totp
bigint | not-null |
  -> "keep" |
      customer_id card_id CardID user_id ssn_id phone_id account_id iban_id paid valid first_name
      FirstName given_name last_name LastName family_name maiden_name middle_name contact_name
      ShipName customer_name product_name category_name company_name Name full_name display_name
      email_address EmailAddress customer_email_address work_email emails e_mail mail_to ssn_number
      SSNNumber social_security_number national_id tax_id vat_number drivers_license license_plate
      card_number credit_card card_type card_brand card_count card_status card_network card_issuer
      cc_num cards account_number account_no acct_no bank_nr bank_num account_type account_name
      routing_number sort_code phone_number phones phone_ext home_phone mobile_number fax_no
      cell_phone device_id deviceFingerprint user_agent serial_number user_name screen_name
      gamer_tag business_name street_address address_line1 house_number city country 
        photo_path Photo avatar_url image_url payload data metadata settings
      alias title amount total quantity created_at updated_at code sku price aba about access
      account accountnumber acct acctno addr address addressline agent apartment api applicant
      attachment attendee author avatar bank beneficiary bic bigint bill billing bio biography
      brand business buyer bytea card cardholder cardnumber cc ccnum ccnumber cell cellphone
      character cidr citext client comment comments company companyname contact contactname count
      creditcard customer customername cv date description details device deviceid digest display
      displayname document driver driverslicense ein email emailaddress emergency employee
      employeename employer encryption ext extension family familyname fax feedback fingerprint
      first firstname fname forename full fullname gamertag given givenname guest handle hash
      headshot history holder housenumber iban id idcard identitycard idnumber image imei inet
      integer issuer itin json jsonb key keys kind last lastname legal legalname licence license
      line1 line2 lname login maiden maidenname mail manager member memo message middle middlename
      mobile msisdn nachname name narrative nationalid nationalidentity network nhs nick nickname
      nin no note notes nr num number numeric obituary organisation organization owner pan parent
      pass passenger passport patient payee payer person personalnumber personname phone photo
      picture portrait prenom private profile real realname receiver
      recipient recovery remarks rep resume review routing scan screenname selfie seller sender
      serialnumber ship shipping signature signer signing sin smallint socialsecurity sortcode
      spouse ssn status story street streetaddress student suite summary surname swift taxid
      teacher tel telefon telephone text thumbnail timestamp tin type udid user useragent userid
      username vat vatnumber vorname whatsapp workplace 
  -> { pseudonym = "digits" } | a postal code: it narrows a person down to a street; a number, so a fake of its digits
      postal_code zip_code PostalCode plz postal postalcode postcode zip zipcode
  -> "keep" | a birth date by its name, not of type date; NOT NULL and no rule fits its type: review by hand
      date_of_birth BirthDate birth_year born_on bday birth birthdate birthday born dob
  -> "keep" | a network address identifies a device; NOT NULL and no rule fits its type: review by hand
      ip_address ipAddress client_ip remote_addr mac_address last_login_ip clientip ip ipaddr
      ipaddress ipv4 ipv6 mac macaddr macaddr8 macaddress remoteaddr
  -> { constant = "0" } | a location identifies where a person is; NOT NULL, so 0
      geo_location gps_coords coordinates coords geo geolocation gps lat latitude lng lon longitude
  -> { constant = "0" } | what a person earns; NOT NULL, so 0
      annual_salary bonus_amount bonus compensation income payroll pension salary wage wages
  -> "keep" | a secret by its name; NOT NULL and no rule fits its type: review by hand
      password_hash passwordHash api_key apiKey private_key access_key secret_key signing_key
      encryption_key recovery_keys hmac_key access_token refresh_token mfa_secret session_id
      pin_hash pin_digest pass_hash accesskey apikey cookie credential credentials cvc cvv hmac mfa
      nonce otp passphrase passwd password pin privatekey pwd salt secret secretkey seed session
      sessionid token totp
text | | key
  -> "keep" | key: the sync pages and upserts by it
      customer_id card_id CardID user_id account_id iban_id paid valid mail_to
      social_security_number national_id tax_id vat_number drivers_license license_plate cc_num
      account_number account_no acct_no bank_nr bank_num account_type routing_number sort_code
      mobile_number fax_no date_of_birth BirthDate birth_year born_on ip_address ipAddress
      client_ip remote_addr mac_address geo_location gps_coords annual_salary bonus_amount
      device_id deviceFingerprint user_agent serial_number gamer_tag street_address address_line1
      house_number city country postal_code zip_code PostalCode photo_path Photo avatar_url
      image_url password_hash passwordHash api_key apiKey private_key access_key secret_key
      signing_key encryption_key recovery_keys hmac_key access_token refresh_token mfa_secret
      session_id pin_hash pin_digest pass_hash payload data metadata settings alias title amount
      total quantity created_at updated_at code sku price aba about access accesskey account
      accountnumber acct acctno addr address addressline agent apartment api apikey applicant
      attachment attendee author avatar bank bday beneficiary bic bigint bill billing bio biography
      birth birthdate birthday bonus born brand business buyer bytea cardholder cardnumber cc ccnum
      ccnumber cell character cidr citext client clientip comment comments company companyname
      compensation contact contactname cookie coordinates coords count credential credentials
      creditcard customer customername cv cvc cvv date description details device deviceid digest
      display displayname dob document driver driverslicense ein emergency employee employeename
      employer encryption ext extension family familyname fax feedback fingerprint first firstname
      fname forename full fullname gamertag geo geolocation given givenname gps guest handle hash
      headshot history hmac holder housenumber id idcard identitycard idnumber image imei income
      inet integer ip ipaddr ipaddress ipv4 ipv6 issuer itin json jsonb key keys kind last lastname
      lat latitude legal legalname licence license line1 line2 lname lng lon longitude mac macaddr
      macaddr8 macaddress maiden maidenname mail manager member memo message mfa middle middlename
      mobile msisdn nachname narrative nationalid nationalidentity network nhs nick nickname nin no
      nonce note notes nr num number numeric obituary organisation organization otp owner pan
      parent pass passenger passphrase passport passwd password patient payee payer payroll pension
      person personalnumber personname photo picture pin plz portrait postal postalcode postcode
      prenom private privatekey profile pwd real realname receiver recipient recovery remarks
      remoteaddr rep resume review routing salary salt scan screenname secret secretkey seed selfie
      seller sender serialnumber session sessionid ship shipping signature signer signing sin
      smallint socialsecurity sortcode spouse status story street streetaddress student suite
      summary surname swift taxid teacher tel telefon text thumbnail timestamp tin token totp type
      udid user useragent userid vat vatnumber vorname wage wages whatsapp workplace zip zipcode
  -> "keep" | key: the sync pages and upserts by it; it looks like PII: review (a key is passed as it is)
      ssn_id phone_id first_name FirstName given_name last_name LastName family_name maiden_name
      middle_name contact_name ShipName customer_name product_name category_name company_name Name
      full_name display_name email_address EmailAddress customer_email_address work_email emails
      e_mail account_name last_login_ip user_name screen_name business_name email emailaddress
      login name username
  -> { pseudonym = "ssn" } | key that looks like an SSN: a bijective fake of its digits, so the sync still pages and links by it (foreign keys to it get the same rule)
      ssn_number SSNNumber ssn
  -> { pseudonym = "digits" } | key that looks like a person's number: a bijective fake of its digits, so the sync still pages and links by it (foreign keys to it get the same rule)
      card_number credit_card card_type card_brand card_count card_status card_network card_issuer
      cards phone_number phones phone_ext home_phone cell_phone card cellphone iban phone telephone
text | | fk
  -> "keep" | foreign key: links must match the keys they point at
      customer_id card_id CardID user_id account_id iban_id paid valid mail_to
      social_security_number national_id tax_id vat_number drivers_license license_plate cc_num
      account_number account_no acct_no bank_nr bank_num account_type routing_number sort_code
      mobile_number fax_no date_of_birth BirthDate birth_year born_on ip_address ipAddress
      client_ip remote_addr mac_address geo_location gps_coords annual_salary bonus_amount
      device_id deviceFingerprint user_agent serial_number gamer_tag street_address address_line1
      house_number city country postal_code zip_code PostalCode photo_path Photo avatar_url
      image_url password_hash passwordHash api_key apiKey private_key access_key secret_key
      signing_key encryption_key recovery_keys hmac_key access_token refresh_token mfa_secret
      session_id pin_hash pin_digest pass_hash payload data metadata settings alias title amount
      total quantity created_at updated_at code sku price aba about access accesskey account
      accountnumber acct acctno addr address addressline agent apartment api apikey applicant
      attachment attendee author avatar bank bday beneficiary bic bigint bill billing bio biography
      birth birthdate birthday bonus born brand business buyer bytea cardholder cardnumber cc ccnum
      ccnumber cell character cidr citext client clientip comment comments company companyname
      compensation contact contactname cookie coordinates coords count credential credentials
      creditcard customer customername cv cvc cvv date description details device deviceid digest
      display displayname dob document driver driverslicense ein emergency employee employeename
      employer encryption ext extension family familyname fax feedback fingerprint first firstname
      fname forename full fullname gamertag geo geolocation given givenname gps guest handle hash
      headshot history hmac holder housenumber id idcard identitycard idnumber image imei income
      inet integer ip ipaddr ipaddress ipv4 ipv6 issuer itin json jsonb key keys kind last lastname
      lat latitude legal legalname licence license line1 line2 lname lng lon longitude mac macaddr
      macaddr8 macaddress maiden maidenname mail manager member memo message mfa middle middlename
      mobile msisdn nachname narrative nationalid nationalidentity network nhs nick nickname nin no
      nonce note notes nr num number numeric obituary organisation organization otp owner pan
      parent pass passenger passphrase passport passwd password patient payee payer payroll pension
      person personalnumber personname photo picture pin plz portrait postal postalcode postcode
      prenom private privatekey profile pwd real realname receiver recipient recovery remarks
      remoteaddr rep resume review routing salary salt scan screenname secret secretkey seed selfie
      seller sender serialnumber session sessionid ship shipping signature signer signing sin
      smallint socialsecurity sortcode spouse status story street streetaddress student suite
      summary surname swift taxid teacher tel telefon text thumbnail timestamp tin token totp type
      udid user useragent userid vat vatnumber vorname wage wages whatsapp workplace zip zipcode
  -> "keep" | foreign key: links must match the keys they point at; it looks like PII: review (a key is passed as it is)
      ssn_id phone_id first_name FirstName given_name last_name LastName family_name maiden_name
      middle_name contact_name ShipName customer_name product_name category_name company_name Name
      full_name display_name email_address EmailAddress customer_email_address work_email emails
      e_mail account_name last_login_ip user_name screen_name business_name email emailaddress
      login name username
  -> "keep" | foreign key: links must match the keys they point at; it looks like PII: review (a key is passed as it is) | number
      ssn_number SSNNumber phone_number phones phone_ext home_phone cell_phone cellphone phone ssn
      telephone
  -> "keep" | foreign key: links must match the keys they point at | number
      card_number credit_card card_type card_brand card_count card_status card_network card_issuer
      cards card iban
"#;

/// A column from `type(width) | constraints | facts`, named `name`.
fn column(name: &str, spec: &str) -> (Column, ColumnFacts) {
    let fields: Vec<&str> = spec.split('|').map(str::trim).collect();
    let [data_type, constraints, facts] = fields[..] else {
        panic!("not `type | constraints | facts`: {spec}");
    };
    let (data_type, max_length) = match data_type.strip_suffix(')') {
        Some(rest) => {
            let (data_type, width) = rest.split_once('(').expect("type(width)");
            (data_type, Some(width.parse().expect("a width")))
        }
        None => (data_type, None),
    };
    let mut column = Column {
        name: name.into(),
        sql_type: data_type.into(),
        data_type: data_type.into(),
        max_length,
        nullable: true,
        generated: false,
        identity: false,
        orderable: true,
        unique: false,
    };
    for word in constraints.split_whitespace() {
        match word {
            "not-null" => column.nullable = false,
            "unique" => column.unique = true,
            "generated" => column.generated = true,
            _ => panic!("no constraint {word}"),
        }
    }
    let mut f = ColumnFacts::default();
    for fact in facts.split(", ").filter(|f| !f.is_empty()) {
        match fact.split_once('=') {
            Some(("evidence", e)) => f.evidence = Some(e.into()),
            Some(("spells", s)) => f.spells_the_person = Some(s.into()),
            _ if fact == "key" => f.key = true,
            _ if fact == "fk" => f.foreign_key = true,
            _ if fact == "people" => f.people = true,
            _ if fact == "secret-shape" => f.secret_shape = true,
            _ => panic!("no fact {fact}"),
        }
    }
    (column, f)
}

/// The proposal for `name` from `-> rule | why | number`.
fn expected(name: &str, outcome: &str) -> Proposal {
    let mut fields = outcome.splitn(3, '|').map(str::trim);
    Proposal {
        column: name.into(),
        rule: fields.next().unwrap_or_default().into(),
        why: fields.next().unwrap_or_default().into(),
        number: fields.next() == Some("number"),
        secret_key: false,
    }
}

/// Each proposal that differs from `want`, said with its column.
fn differs(column: &Column, facts: &ColumnFacts, want: Proposal) -> Option<String> {
    let got = propose(column, facts);
    (got != want).then(|| format!("{column:?} {facts:?}\n  want {want:?}\n  got  {got:?}"))
}

#[test]
fn every_kind_of_proposal_is_as_before() {
    let mut wrong = Vec::new();
    let mut input = None;
    let mut count = 0;
    for line in CASES.lines().filter(|l| !l.trim().is_empty()) {
        if let Some(outcome) = line.trim().strip_prefix("->") {
            let (name, spec) = input.take().expect("a column before its proposal");
            let (column, facts) = column(name, spec);
            wrong.extend(differs(&column, &facts, expected(name, outcome)));
            count += 1;
        } else {
            input = Some(
                line.split_once('|')
                    .map(|(n, s)| (n.trim(), s))
                    .expect("name | ..."),
            );
        }
    }
    assert_eq!(count, 190);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_vocabulary_is_read_as_before() {
    let mut wrong = Vec::new();
    let mut spec = "";
    let mut outcome = "";
    let mut count = 0;
    for line in VOCABULARY.lines().filter(|l| !l.trim().is_empty()) {
        if !line.starts_with(' ') {
            spec = line;
        } else if let Some(o) = line.trim().strip_prefix("->") {
            outcome = o;
        } else {
            for name in line.split_whitespace() {
                let (column, facts) = column(name, spec);
                wrong.extend(differs(&column, &facts, expected(name, outcome)));
                count += 1;
            }
        }
    }
    assert_eq!(count, 6 * 427);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
