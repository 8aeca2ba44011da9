//! The heuristics of `policy init` as a table: each one says what it matches in a column (words
//! of its name, its type, its constraints, what the sample of its values showed) and what it
//! proposes, and the first that matches decides. Their order is the order of certainty: keys,
//! then secrets, then identifiers by name, then people's names and places, then what the sampled
//! values show. A column none matches is kept, without a comment.
//!
//! A few outcomes bend with the column (a UNIQUE column needs a unique fake, a narrow one a
//! rule that fits, a NOT NULL one something other than NULL): [`Then`] names each such ladder
//! once, so the table says which one a heuristic takes rather than spelling it again.

use super::{
    first_name, is_log_table, is_secret_table, is_social_table, last_name, ColumnFacts, Name,
    Proposal,
};
use maskbus_mask::PseudonymKind;
use maskbus_pg::Column;
// The table reads its tests and outcomes unqualified, as a list of words.
use Test::*;
use Then::*;

/// The rule for one column, from its facts: that of the first heuristic of [`HEURISTICS`] whose
/// tests all hold. `nullable`, `unique`, `data_type` and `max_length` come from the catalog.
pub fn propose(column: &Column, facts: &ColumnFacts) -> Proposal {
    let subject = Subject {
        column,
        facts,
        name: Name::of(&column.name),
    };
    let heuristic = HEURISTICS
        .iter()
        .find(|h| h.when.iter().all(|test| subject.holds(test)))
        .unwrap_or(&OTHERWISE);
    let why = subject.why(heuristic.why);
    let proposal = heuristic.then.propose(&subject, &why);
    // A JSON column whose sampled leaves hold names or secrets: a rule for each of those leaves.
    match &facts.json_rule {
        Some(rule)
            if subject.holds(&Json)
                && !facts.key
                && !facts.foreign_key
                && (proposal.rule == KEEP || proposal.rule == JSON_SCRUBBED) =>
        {
            subject.proposal(
                rule,
                "JSON whose sampled leaves hold PII or secrets: a rule for each such leaf, every other leaf and key scrubbed",
            )
        }
        _ => proposal,
    }
}

/// Every heuristic, in the order they are tried.
const HEURISTICS: &[Heuristic] = &[
    // Keys and foreign keys are kept: the sync pages and links by them. But a key made of a
    // person's number gets a bijective fake of its digits, which the sync pages and links by as
    // well; `crate::init` gives the foreign keys to it the same rule.
    Heuristic {
        when: &[Key, SSN_NUMBER, Any(&[Text, Numeric])],
        then: Rule(FAKE_SSN),
        why: "key that looks like an SSN: a bijective fake of its digits, so the sync still pages and links by it (foreign keys to it get the same rule)",
    },
    Heuristic {
        when: &[Key, PERSONS_NUMBER, Any(&[Text, Numeric])],
        then: Rule(FAKE_DIGITS),
        why: "key that looks like a person's number: a bijective fake of its digits, so the sync still pages and links by it (foreign keys to it get the same rule)",
    },
    // A secret used as a key (`django_session.session_key`, `authtoken_token.key`): a keyed
    // bijection of its letters and digits where its values are made of them; else, a key being
    // passed as it is, its table is left out.
    Heuristic {
        when: &[
            Key,
            Any(&[Text, Array]),
            Not(&AnId),
            Any(&[
                SecretShape,
                All(&[SecretTable, Named(SECRET_FIELDS)]),
            ]),
        ],
        then: SecretKey,
        why: "key whose values are secrets (a session or API key)",
    },
    // A key of letters and digits in a table of people (`PTC11962M`: a person's initials,
    // digits, a gender): a keyed bijection of each class, so nothing of the letters passes and
    // the sync still pages and links by it.
    Heuristic {
        when: &[Key, Text, People, LettersAndDigits],
        then: Rule(FAKE_ALNUM),
        why: "key of letters and digits in a table of people (initials, a code): a keyed bijection of each class, so the sync still pages and links by it (foreign keys to it get the same rule)",
    },
    Heuristic {
        when: &[Key],
        then: Kept { number: false },
        why: "key: the sync pages and upserts by it",
    },
    Heuristic {
        when: &[ForeignKey, PERSONS_NUMBER, Any(&[Text, Numeric])],
        then: Kept { number: true },
        why: "foreign key: links must match the keys they point at",
    },
    Heuristic {
        when: &[ForeignKey],
        then: Kept { number: false },
        why: "foreign key: links must match the keys they point at",
    },
    // No rule: a generated column is not synced, and the target computes it.
    Heuristic {
        when: &[Generated],
        then: Rule(NO_RULE),
        why: "generated: the target computes it from the masked columns; no rule needed",
    },
    Heuristic {
        when: &[Any(&[
            Named(SECRETS),
            All(&[Named(KEYS_OF_A_KIND), Named(&["key", "keys"])]),
            All(&[Named(&["hash", "digest"]), Named(&["password", "pass", "pin"])]),
        ])],
        then: Token,
        why: "a secret by its name",
    },
    Heuristic {
        when: &[Any(&[Text, Array]), SecretTable, Named(SECRET_FIELDS)],
        then: Token,
        why: "a secret by its table",
    },
    Heuristic {
        when: &[SecretShape],
        then: Token,
        why: "values shaped like secrets (long, random letters and digits)",
    },
    // A log's reference to any row (`django_admin_log.object_id`) is, for a token's or a
    // session's row, that secret.
    Heuristic {
        when: &[Text, LogTable, SomeSecrets],
        then: Token,
        why: "a log's column some of whose sampled values are shaped like secrets (the key of a token's or a session's row)",
    },
    // A list of emails (`bcc_emails`, `recipients`): every email's local part scrubbed.
    Heuristic {
        when: &[
            Any(&[Text, Array]),
            Not(&Unique),
            Any(&[
                Words(&["bcc", "recipients"]),
                All(&[
                    Words(&["emails", "mails", "addresses"]),
                    Not(&NamedOnly(&["emails"])),
                    Any(&[Named(&["email", "mail"]), Says(&["email"])]),
                ]),
            ]),
        ],
        then: Rule(SCRUB),
        why: "a list of emails: every email's local part scrubbed",
    },
    Heuristic {
        when: &[Array, Named(&["email", "mail", "emailaddress"])],
        then: Rule(EMAIL),
        why: "emails by their name: each element",
    },
    Heuristic {
        when: &[Text, Named(&["email", "mail", "emailaddress"])],
        then: UniqueOr(FAKE_EMAIL, EMAIL),
        why: "an email by its name",
    },
    // A column of emails is an email column whatever its name.
    Heuristic {
        when: &[Text, MostlySay("email")],
        then: UniqueOr(FAKE_EMAIL, EMAIL),
        why: "values are emails ({evidence})",
    },
    Heuristic {
        when: &[Text, Named(&["ssn", "socialsecurity"])],
        then: Digits(SSN, 11),
        why: "an SSN by its name",
    },
    Heuristic {
        when: &[Text, Named(NATIONAL_IDS)],
        then: Digits(LAST_FOUR, 0),
        why: "a national or tax identifier by its name",
    },
    Heuristic {
        when: &[
            Text,
            Named(&["tax", "vat", "fiscal", "legal"]),
            Named(&["number", "no", "num", "nr", "id", "code", "identifier", "registration"]),
        ],
        then: Digits(LAST_FOUR, 0),
        why: "a legal or tax number by its name",
    },
    // `card_type`, `card_count`: about cards, not a card's number.
    Heuristic {
        when: &[Text, Not(&Named(CARD_KINDS)), Named(CARDS)],
        then: Digits(CARD, 19),
        why: "a card number by its name",
    },
    Heuristic {
        when: &[
            Text,
            Any(&[
                Named(ACCOUNT_NUMBERS),
                All(&[
                    Named(&["account", "acct", "bank"]),
                    Named(&["number", "no", "num", "nr"]),
                ]),
            ]),
        ],
        then: Digits(LAST_FOUR, 0),
        why: "an account or routing number by its name",
    },
    Heuristic {
        when: &[
            Text,
            Any(&[Named(PHONES), All(&[People, Named(&["extension", "ext"])])]),
        ],
        then: Digits(LAST_FOUR, 0),
        why: "a phone number by its name",
    },
    Heuristic {
        when: &[Named(BIRTH), Any(&[Date, Timestamp])],
        then: Rule(YEAR_ONLY),
        why: "a birth date: the year is kept",
    },
    Heuristic {
        when: &[Named(BIRTH)],
        then: Safe,
        why: "a birth date by its name, not of type date",
    },
    // A network address: NULL where allowed, else a documentation address of its type, else
    // redacted text.
    Heuristic {
        when: &[DataType(&["inet", "cidr"])],
        then: NullOr(DOCUMENTATION_IP, "a documentation address"),
        why: "a network address identifies a device",
    },
    Heuristic {
        when: &[DataType(&["macaddr"])],
        then: NullOr(DOCUMENTATION_MAC, "a documentation address"),
        why: "a network address identifies a device",
    },
    Heuristic {
        when: &[NETWORK, Text, Not(&Nullable)],
        then: RedactOrSafe,
        why: "a network address identifies a device",
    },
    Heuristic {
        when: &[NETWORK],
        then: Safe,
        why: "a network address identifies a device",
    },
    Heuristic {
        when: &[Named(LOCATIONS), Numeric],
        then: NullOr(ZERO, "0"),
        why: "a location identifies where a person is",
    },
    Heuristic {
        when: &[Named(LOCATIONS)],
        then: Safe,
        why: "a location identifies where a person is",
    },
    Heuristic {
        when: &[Numeric, Named(EARNINGS)],
        then: NullOr(ZERO, "0"),
        why: "what a person earns",
    },
    Heuristic {
        when: &[Text, Named(DEVICES)],
        then: Identifying(REDACT),
        why: "identifies a device by its name",
    },
    Heuristic {
        when: &[
            Numeric,
            Any(&[
                NamedOnly(&["age"]),
                All(&[People, Named(&["age"])]),
                Named(&["ageyears", "ageatdeath", "currentage", "patientage"]),
            ]),
        ],
        then: NullOr(ZERO, "0"),
        why: "a person's age",
    },
    Heuristic {
        when: &[
            Text,
            Any(&[
                All(&[Named(&["middle"]), Named(&["initial", "initials"])]),
                NamedOnly(&["mi"]),
                NamedOnly(&["minit"]),
                NamedOnly(&["midinit"]),
                NamedOnly(&["initials"]),
            ]),
        ],
        then: NullOr(INITIAL, "X"),
        why: "a middle initial: first_letter would keep all of it",
    },
    // A third party's account id in a social login's table (`uid`, `extra_data`).
    Heuristic {
        when: &[
            SocialTable,
            Any(&[Text, Numeric]),
            Named(&["uid", "externalid", "provideruid", "subject", "sub", "socialid"]),
        ],
        then: Token,
        why: "an account id at another service (a social login)",
    },
    Heuristic {
        when: &[SocialTable, Any(&[Json, Text]), Named(&["extra", "extradata", "data", "profile"])],
        then: JsonOrRedact,
        why: "the profile another service keeps of the person (a social login)",
    },
    // Representations of rows and free text in logs and versions name people (usernames,
    // full names): `django_admin_log.object_repr`, `reversion_version.serialized_data`.
    Heuristic {
        when: &[
            Text,
            Any(&[
                Named(&["repr", "representation", "objectrepr", "objectrepresentation"]),
                All(&[LogTable, Named(LOG_TEXT)]),
            ]),
        ],
        then: RedactOrSafe,
        why: "the text of a row's representation or a log's message: it names people (usernames, full names)",
    },
    // A fake name where a dozen letters fit and it need not be unique.
    Heuristic {
        when: &[Text, FirstName, Not(&Unique), Fits(12)],
        then: Rule(FAKE_FIRST_NAME),
        why: "a first name by its name",
    },
    Heuristic {
        when: &[Text, LastName, Not(&Unique), Fits(12)],
        then: Rule(FAKE_LAST_NAME),
        why: "a last name by its name",
    },
    Heuristic {
        when: &[Text, Any(&[FirstName, LastName])],
        then: Identifying(FIRST_LETTER),
        why: "a name by its name",
    },
    Heuristic {
        when: &[Text, Named(USER_NAMES)],
        then: Identifying(FIRST_LETTER),
        why: "a user name: it often spells the person",
    },
    // `contact_name`, `ShipName`, and a bare `name` in a table of people.
    Heuristic {
        when: &[
            Text,
            Any(&[
                Named(PERSON_NAMES),
                All(&[Named(&["name"]), Named(PERSON_ROLES)]),
                All(&[People, NamedOnly(&["name"])]),
            ]),
            Fits(4),
        ],
        then: Identifying(FIRST_LETTER),
        why: "a person's name",
    },
    Heuristic {
        when: &[Text, People, Named(EMPLOYERS), Fits(4)],
        then: Identifying(FIRST_LETTER),
        why: "where a person works",
    },
    Heuristic {
        when: &[Text, Named(ADDRESSES)],
        then: RedactOrFirstLetter,
        why: "a street address by its name",
    },
    Heuristic {
        when: &[Text, Named(POSTAL_CODES)],
        then: RedactOrFirstLetter,
        why: "a postal code: it narrows a person down to a street",
    },
    // A postal code kept as a number (`zip integer`): a fake of its digits keeps its type.
    Heuristic {
        when: &[Numeric, Named(POSTAL_CODES)],
        then: Rule(FAKE_DIGITS),
        why: "a postal code: it narrows a person down to a street; a number, so a fake of its digits",
    },
    // Bytes of a person: a picture by its name in a table of people, or a portrait anywhere.
    Heuristic {
        when: &[Bytes, Named(IMAGES), Any(&[People, Named(PORTRAITS)])],
        then: Safe,
        why: "an image or document of a person",
    },
    Heuristic {
        when: &[Bytes, People],
        then: Safe,
        why: "bytes kept about a person",
    },
    // The path or address of a picture (`.../davolio.bmp`).
    Heuristic {
        when: &[Text, Named(IMAGES), Any(&[People, SpellsThePerson])],
        then: Identifying(REDACT),
        why: "where a person's picture or document is: it often spells the name",
    },
    Heuristic {
        when: &[Text, Named(FREE_TEXT), People],
        then: RedactOrSafe,
        why: "free text about a person (a biography names them)",
    },
    // What the sampled values show, when the name said nothing.
    Heuristic {
        when: &[Text, SpellsThePerson],
        then: RedactOrFirstLetter,
        why: "values hold the row's own name ({spells})",
    },
    Heuristic {
        when: &[Json, Evidence],
        then: Rule(JSON_SCRUBBED),
        why: "JSON whose values look like PII ({evidence}): every leaf and key scrubbed; name paths to keep what is safe",
    },
    Heuristic {
        when: &[Any(&[Text, Array]), Not(&Unique), Evidence],
        then: Rule(SCRUB),
        why: "free text: {evidence}; each element of an array",
    },
    // UNIQUE from here on: a unique fake, which `scrub` is not.
    Heuristic {
        when: &[Text, Says(&["email"]), FitsFake(PseudonymKind::Email)],
        then: Rule(FAKE_EMAIL),
        why: "UNIQUE, values look like emails ({evidence}): a unique fake that fits",
    },
    Heuristic {
        when: &[Text, Says(&["ssn", "card", "phone", "account"])],
        then: Rule(FAKE_DIGITS),
        why: "UNIQUE, values look like numbers of a person ({evidence}): a unique fake of their digits",
    },
    Heuristic {
        when: &[Evidence],
        then: Safe,
        why: "looks like PII ({evidence})",
    },
];

/// What a column no heuristic matches gets: nothing says it is personal.
const OTHERWISE: Heuristic = Heuristic {
    when: &[],
    then: Rule(KEEP),
    why: "",
};

/// An SSN by the sample, or by its name unless that names an id (`ssn_id` is a serial).
const SSN_NUMBER: Test = Any(&[Says(&["ssn"]), All(&[Not(&AnId), Named(&["ssn"])])]);

/// A person's number (an SSN, a card, a phone, an account) by the sample, or by its name
/// unless that names an id (`card_id` is a serial).
const PERSONS_NUMBER: Test = Any(&[
    SSN_NUMBER,
    Says(&["card", "phone", "account"]),
    All(&[Not(&AnId), Named(&["phone", "card", "iban"])]),
]);

/// A key that may hold PII, by its sample or its name: kept all the same, with a note.
const LOOKS_LIKE_PII: Test = Any(&[
    Evidence,
    Named(&["email", "ssn", "phone", "name", "username", "login"]),
]);

/// A network address by its name or its type.
const NETWORK: Test = Any(&[
    Named(&[
        "ip",
        "ipaddress",
        "ipaddr",
        "ipv4",
        "ipv6",
        "remoteaddr",
        "clientip",
        "mac",
        "macaddress",
        "macaddr",
    ]),
    DataType(&["inet", "cidr", "macaddr", "macaddr8"]),
]);

/// Secrets by a word of their name.
const SECRETS: &[&str] = &[
    "password",
    "passwd",
    "pwd",
    "secret",
    "token",
    "salt",
    "hmac",
    "apikey",
    "privatekey",
    "accesskey",
    "secretkey",
    "otp",
    "totp",
    "mfa",
    "credential",
    "credentials",
    "cookie",
    "sessionid",
    "session",
    "nonce",
    "pin",
    "cvv",
    "cvc",
    "passphrase",
    "seed",
];

/// Columns of a table of secrets that hold the secret (`api_keys.value`, `otp_totpdevice.key`).
const SECRET_FIELDS: &[&str] = &[
    "value",
    "key",
    "secret",
    "token",
    "data",
    "code",
    "hash",
    "digest",
    "seed",
    "sessiondata",
    "sessionkey",
];

/// Free text of logs and versions.
const LOG_TEXT: &[&str] = &[
    "message",
    "changemessage",
    "comment",
    "comments",
    "description",
    "details",
    "serialized",
    "serializeddata",
    "objectdata",
    "snapshot",
    "changes",
    "diff",
    "before",
    "after",
    "text",
    "body",
    "note",
    "notes",
    "summary",
];

/// Keys that are secrets (`api_key`, `signing_key`), beside the word `key`.
const KEYS_OF_A_KIND: &[&str] = &[
    "api",
    "private",
    "signing",
    "encryption",
    "access",
    "recovery",
];

/// National and tax identifiers, but for SSNs (their own heuristic, just before).
const NATIONAL_IDS: &[&str] = &[
    "sin",
    "nin",
    "nationalid",
    "nationalidentity",
    "taxid",
    "tin",
    "vat",
    "vatnumber",
    "ein",
    "itin",
    "passport",
    "license",
    "licence",
    "driverslicense",
    "nhs",
    "personalnumber",
    "idnumber",
    "idcard",
    "identitycard",
    "taxnumber",
    "taxno",
    "taxcode",
    "vatno",
    "vatid",
    "ustid",
    "nif",
    "nie",
    "cpf",
    "cnpj",
    "siren",
    "siret",
    "gstin",
    "abn",
    "tfn",
    "utr",
    "steuernummer",
];

/// Card numbers by a word of their name.
const CARDS: &[&str] = &[
    "card",
    "creditcard",
    "cardnumber",
    "pan",
    "ccnum",
    "ccnumber",
    "cc",
];

/// Words that make a card's column about the card, not its number.
const CARD_KINDS: &[&str] = &[
    "type", "brand", "kind", "count", "status", "network", "issuer",
];

/// Account and routing numbers by a word of their name.
const ACCOUNT_NUMBERS: &[&str] = &[
    "iban",
    "routing",
    "aba",
    "accountnumber",
    "acctno",
    "bic",
    "swift",
    "sortcode",
];

const PHONES: &[&str] = &[
    "phone",
    "mobile",
    "fax",
    "tel",
    "telephone",
    "cell",
    "cellphone",
    "msisdn",
    "whatsapp",
    "telefon",
];

const BIRTH: &[&str] = &["birth", "dob", "born", "birthday", "bday", "birthdate"];

const LOCATIONS: &[&str] = &[
    "latitude",
    "longitude",
    "lat",
    "lon",
    "lng",
    "geo",
    "geolocation",
    "coordinates",
    "coords",
    "gps",
];

/// What a person earns, in a number.
const EARNINGS: &[&str] = &[
    "salary",
    "wage",
    "wages",
    "income",
    "compensation",
    "payroll",
    "bonus",
    "pension",
];

const DEVICES: &[&str] = &[
    "device",
    "fingerprint",
    "deviceid",
    "imei",
    "udid",
    "useragent",
    "serialnumber",
];

const USER_NAMES: &[&str] = &[
    "username",
    "login",
    "handle",
    "screenname",
    "nickname",
    "userid",
    "gamertag",
];

/// A person's name in one word run together.
const PERSON_NAMES: &[&str] = &[
    "fullname",
    "displayname",
    "contactname",
    "customername",
    "employeename",
    "personname",
    "realname",
    "legalname",
    "middlename",
];

/// Roles whose `..._name` is a person's (`contact_name`, `ship_name`, `customer_name`).
const PERSON_ROLES: &[&str] = &[
    "contact",
    "customer",
    "client",
    "employee",
    "user",
    "person",
    "owner",
    "recipient",
    "ship",
    "shipping",
    "billing",
    "bill",
    "sender",
    "receiver",
    "holder",
    "cardholder",
    "beneficiary",
    "patient",
    "guest",
    "member",
    "driver",
    "passenger",
    "parent",
    "spouse",
    "emergency",
    "full",
    "display",
    "real",
    "legal",
    "nick",
    "middle",
    "maiden",
    "buyer",
    "seller",
    "payee",
    "payer",
    "signer",
    "manager",
    "rep",
    "agent",
    "author",
    "attendee",
    "applicant",
    "student",
    "teacher",
];

/// Where a person works, in a table of people.
const EMPLOYERS: &[&str] = &[
    "company",
    "companyname",
    "employer",
    "organisation",
    "organization",
    "workplace",
    "business",
];

const ADDRESSES: &[&str] = &[
    "address",
    "street",
    "addr",
    "line1",
    "line2",
    "addressline",
    "streetaddress",
    "housenumber",
    "apartment",
    "suite",
];

const POSTAL_CODES: &[&str] = &["postal", "postcode", "zip", "zipcode", "postalcode", "plz"];

/// Pictures and documents, or where they are.
const IMAGES: &[&str] = &[
    "photo",
    "picture",
    "image",
    "avatar",
    "portrait",
    "headshot",
    "selfie",
    "signature",
    "scan",
    "document",
    "attachment",
    "resume",
    "cv",
    "thumbnail",
];

/// Pictures that are of a person wherever they are kept (all of them among [`IMAGES`]).
const PORTRAITS: &[&str] = &[
    "photo",
    "avatar",
    "portrait",
    "headshot",
    "selfie",
    "signature",
];

/// Free text, which about a person tells who they are.
const FREE_TEXT: &[&str] = &[
    "notes",
    "note",
    "bio",
    "biography",
    "about",
    "comment",
    "comments",
    "remarks",
    "memo",
    "message",
    "summary",
    "details",
    "history",
    "feedback",
    "review",
    "description",
    "profile",
    "narrative",
    "obituary",
    "story",
];

// The rules proposed, as written in TOML.
const KEEP: &str = r#""keep""#;
const NULL: &str = r#""null""#;
const REDACT: &str = r#""redact""#;
const FIRST_LETTER: &str = r#""first_letter""#;
const LAST_FOUR: &str = r#""last_four""#;
const EMAIL: &str = r#""email""#;
const SSN: &str = r#""ssn""#;
const CARD: &str = r#""card""#;
const YEAR_ONLY: &str = r#""year_only""#;
const SCRUB: &str = r#""scrub""#;
const FAKE_TOKEN: &str = r#"{ pseudonym = "token" }"#;
const FAKE_DIGITS: &str = r#"{ pseudonym = "digits" }"#;
const FAKE_ALNUM: &str = r#"{ pseudonym = "alnum" }"#;
const FAKE_EMAIL: &str = r#"{ pseudonym = "email" }"#;
const FAKE_SSN: &str = r#"{ pseudonym = "ssn" }"#;
const FAKE_FIRST_NAME: &str = r#"{ pseudonym = "first_name" }"#;
const FAKE_LAST_NAME: &str = r#"{ pseudonym = "last_name" }"#;
const ZERO: &str = r#"{ constant = "0" }"#;
const INITIAL: &str = r#"{ constant = "X" }"#;
const EMPTY_BYTES: &str = r#"{ constant = "\\x" }"#;
const DOCUMENTATION_IP: &str = r#"{ constant = "192.0.2.1" }"#;
const DOCUMENTATION_MAC: &str = r#"{ constant = "00:00:5e:00:53:00" }"#;
const JSON_SCRUBBED: &str = "{ json = {} }";
/// A comment line instead of a rule: `crate::propose::render` writes no key for it.
const NO_RULE: &str = "";

/// The types whose values are text, as `information_schema` spells them.
const TEXT_TYPES: &[&str] = &["character varying", "character", "text", "citext"];

/// The width of `"[redacted]"`, what `redact` writes.
const REDACTED_WIDTH: usize = 10;

/// One heuristic: when every test holds, the column gets `then`, said with `why`.
struct Heuristic {
    when: &'static [Test],
    then: Then,
    /// The comment beside the rule. At most one of `{evidence}` and `{spells}` stands for the
    /// sample's counts, for heuristics that test for them.
    why: &'static str,
}

/// What a heuristic tests of a column.
#[derive(Clone, Copy)]
enum Test {
    /// One of these is a word of the name, plural or not, or (five letters and more) inside
    /// the words run together: [`Name::has`].
    Named(&'static [&'static str]),
    /// The name is these words and no other.
    NamedOnly(&'static [&'static str]),
    /// A first name by its name: [`first_name`].
    FirstName,
    /// A last name by its name: [`last_name`].
    LastName,
    /// The name ends in `id`, in any case: a serial, whatever else it says.
    AnId,
    /// Types by class, as `information_schema` spells them.
    Text,
    Json,
    Array,
    Date,
    Timestamp,
    Bytes,
    Numeric,
    /// One of these types exactly.
    DataType(&'static [&'static str]),
    /// A value this many characters long fits (the type has no limit, or one as wide).
    Fits(usize),
    /// The shortest fake of this kind fits.
    FitsFake(PseudonymKind),
    Unique,
    Nullable,
    Generated,
    /// Part of the key the sync pages by.
    Key,
    ForeignKey,
    /// The table holds people.
    People,
    /// Sampled values look like secrets.
    SecretShape,
    /// Every sampled value mixes letters and digits, with room for a bijection of them.
    LettersAndDigits,
    /// Some sampled values look like secrets.
    SomeSecrets,
    /// Sampled values hold the same row's name.
    SpellsThePerson,
    /// The detectors found a pattern in the sampled values.
    Evidence,
    /// One of these is a word of the name exactly (plurals told apart: `emails`, not `email`).
    Words(&'static [&'static str]),
    /// The table holds secrets by its name: [`is_secret_table`].
    SecretTable,
    /// The table is a log or a history of versions by its name: [`is_log_table`].
    LogTable,
    /// The table holds logins through another service by its name: [`is_social_table`].
    SocialTable,
    /// The detectors say most sampled values (four in five) look like this kind.
    MostlySay(&'static str),
    /// The detectors say sampled values look like one of these (`look like ssn`).
    Says(&'static [&'static str]),
    Not(&'static Test),
    Any(&'static [Test]),
    All(&'static [Test]),
}

/// What a heuristic proposes. Each ladder below is tried top down, and what it adds to the
/// comment says why it stepped down.
#[derive(Clone, Copy)]
enum Then {
    /// This rule.
    Rule(&'static str),
    /// The safe rule: `null` where NULL is allowed; else `redact` for text or an array that is
    /// not UNIQUE and fits it; else a unique fake for UNIQUE text that fits one; else empty
    /// bytes; else `keep`, to review by hand.
    Safe,
    /// Text that identifies: a unique keyed fake where UNIQUE (the safe rule if none fits),
    /// this rule otherwise.
    Identifying(&'static str),
    /// `Identifying(redact)` where `[redacted]` fits, `Identifying(first_letter)` otherwise.
    RedactOrFirstLetter,
    /// `Identifying(redact)` where `[redacted]` fits, the safe rule otherwise.
    RedactOrSafe,
    /// Digits that identify: a unique fake of its digits where UNIQUE; else this rule where
    /// a value this wide fits (0: any width), its last four digits where not.
    Digits(&'static str, usize),
    /// A secret: a keyed fake of letters, unique, where text or an array fits one; the safe
    /// rule otherwise.
    Token,
    /// The first rule where UNIQUE, the second otherwise.
    UniqueOr(&'static str, &'static str),
    /// `null` where NULL is allowed, this rule (said as the second) where NOT NULL.
    NullOr(&'static str, &'static str),
    /// A key whose values are secrets: a keyed bijection of its letters and digits where every
    /// sampled value is made of them; else kept, marked so its table is left out.
    SecretKey,
    /// JSON scrubbed leaf by leaf; text redacted (or the safe rule).
    JsonOrRedact,
    /// A key or foreign key kept, with a note to review it where it looks like PII
    /// ([`LOOKS_LIKE_PII`]); `number` marks a foreign key to a person's number.
    Kept { number: bool },
}

/// Text or an array wide enough for a keyed fake of letters.
const TOKEN_FITS: Test = All(&[Any(&[Text, Array]), FitsFake(PseudonymKind::Token)]);

impl Then {
    fn propose(self, s: &Subject, why: &str) -> Proposal {
        match self {
            Rule(rule) => s.proposal(rule, why),
            Safe => s.safe(why),
            Identifying(lossy) => s.identifying(lossy, why),
            RedactOrFirstLetter if s.fits(REDACTED_WIDTH) => s.identifying(REDACT, why),
            RedactOrFirstLetter => s.identifying(FIRST_LETTER, why),
            RedactOrSafe if s.fits(REDACTED_WIDTH) => s.identifying(REDACT, why),
            RedactOrSafe => s.safe(why),
            Digits(_, _) if s.column.unique => s.proposal(
                FAKE_DIGITS,
                &format!("{why}; UNIQUE, so a unique fake of its digits"),
            ),
            Digits(lossy, width) if s.fits(width) => s.proposal(lossy, why),
            Digits(_, _) => s.proposal(LAST_FOUR, why),
            Token if s.holds(&TOKEN_FITS) => s.proposal(
                FAKE_TOKEN,
                &format!("{why}: a keyed fake of letters, unique"),
            ),
            Token => s.safe(why),
            UniqueOr(unique, _) if s.column.unique => {
                s.proposal(unique, &format!("{why}; UNIQUE, so a unique fake"))
            }
            UniqueOr(_, otherwise) => s.proposal(otherwise, why),
            NullOr(_, _) if s.column.nullable => s.proposal(NULL, why),
            NullOr(rule, so) => s.proposal(rule, &format!("{why}; NOT NULL, so {so}")),
            SecretKey if s.facts.alnum_shape => s.proposal(
                FAKE_ALNUM,
                &format!(
                    "{why}: its values are letters and digits, so a keyed bijection of them: nothing of the secret passes, and the sync still pages and links by it (foreign keys to it get the same rule)"
                ),
            ),
            SecretKey => {
                let mut kept = s.proposal(
                    KEEP,
                    &format!("{why}: no bijective rule hides it and a key is passed as it is, so its table is left out; decide by hand"),
                );
                kept.secret_key = true;
                kept
            }
            JsonOrRedact if s.holds(&Json) => s.proposal(JSON_SCRUBBED, why),
            JsonOrRedact if s.fits(REDACTED_WIDTH) => s.identifying(REDACT, why),
            JsonOrRedact => s.safe(why),
            Kept { number } => {
                let mut kept = if s.holds(&LOOKS_LIKE_PII) {
                    s.proposal(
                        KEEP,
                        &format!("{why}; it looks like PII: review (a key is passed as it is)"),
                    )
                } else {
                    s.proposal(KEEP, why)
                };
                kept.number = number;
                kept
            }
        }
    }
}

/// A column as the heuristics read it: the catalog's entry, the shell's facts, its name's words.
struct Subject<'a> {
    column: &'a Column,
    facts: &'a ColumnFacts,
    name: Name,
}

impl Subject<'_> {
    fn holds(&self, test: &Test) -> bool {
        let data_type = self.column.data_type.as_str();
        match *test {
            Named(terms) => self.name.has(terms),
            NamedOnly(words) => self.name.words == words,
            FirstName => first_name(&self.name),
            LastName => last_name(&self.name),
            AnId => self.column.name.to_ascii_lowercase().ends_with("id"),
            Text => TEXT_TYPES.contains(&data_type),
            Json => matches!(data_type, "json" | "jsonb"),
            Array => data_type == "ARRAY",
            Date => data_type == "date",
            Timestamp => data_type.starts_with("timestamp"),
            Bytes => data_type == "bytea",
            Numeric => matches!(
                data_type,
                "smallint" | "integer" | "bigint" | "numeric" | "real" | "double precision"
            ),
            DataType(types) => types.contains(&data_type),
            Fits(width) => self.fits(width),
            FitsFake(kind) => self.fits(kind.min_width()),
            Unique => self.column.unique,
            Nullable => self.column.nullable,
            Generated => self.column.generated,
            Key => self.facts.key,
            ForeignKey => self.facts.foreign_key,
            People => self.facts.people,
            SecretShape => self.facts.secret_shape,
            LettersAndDigits => self.facts.letters_and_digits,
            SomeSecrets => self.facts.some_secrets,
            SpellsThePerson => self.facts.spells_the_person.is_some(),
            Evidence => self.facts.evidence.is_some(),
            Words(terms) => self.name.words.iter().any(|w| terms.contains(&w.as_str())),
            SecretTable => is_secret_table(&self.facts.table),
            LogTable => is_log_table(&self.facts.table),
            SocialTable => is_social_table(&self.facts.table),
            MostlySay(kind) => self.facts.evidence.as_deref().is_some_and(|evidence| {
                evidence.split(", ").any(|part| {
                    let Some((counts, what)) = part.split_once(" sampled values look like ") else {
                        return false;
                    };
                    let Some((n, of)) = counts.split_once(" of ") else {
                        return false;
                    };
                    let (Ok(n), Ok(of)) = (n.parse::<usize>(), of.parse::<usize>()) else {
                        return false;
                    };
                    what == kind && of > 0 && n * 5 >= of * 4
                })
            }),
            Says(kinds) => self.facts.evidence.as_deref().is_some_and(|evidence| {
                kinds
                    .iter()
                    .any(|kind| evidence.contains(&format!("look like {kind}")))
            }),
            Not(test) => !self.holds(test),
            Any(tests) => tests.iter().any(|t| self.holds(t)),
            All(tests) => tests.iter().all(|t| self.holds(t)),
        }
    }

    /// A value `width` characters long fits the column.
    fn fits(&self, width: usize) -> bool {
        self.column.max_length.is_none_or(|max| max >= width)
    }

    /// `template` with the sample's counts in place of its `{evidence}` or `{spells}`.
    fn why(&self, template: &str) -> String {
        let counts = [
            ("{evidence}", &self.facts.evidence),
            ("{spells}", &self.facts.spells_the_person),
        ];
        for (mark, value) in counts {
            if let Some((before, after)) = template.split_once(mark) {
                return format!("{before}{}{after}", value.as_deref().unwrap_or_default());
            }
        }
        template.to_string()
    }

    fn proposal(&self, rule: &str, why: &str) -> Proposal {
        Proposal {
            column: self.column.name.clone(),
            rule: rule.to_string(),
            why: why.to_string(),
            number: false,
            secret_key: false,
        }
    }

    /// See [`Then::Safe`].
    fn safe(&self, why: &str) -> Proposal {
        let column = self.column;
        let text = self.holds(&Text);
        if column.nullable {
            self.proposal(NULL, why)
        } else if (text || self.holds(&Array)) && self.fits(REDACTED_WIDTH) && !column.unique {
            self.proposal(REDACT, why)
        } else if text && column.unique && self.fits(PseudonymKind::Token.min_width()) {
            self.proposal(FAKE_TOKEN, &format!("{why}; UNIQUE, so a unique fake"))
        } else if self.holds(&Bytes) {
            self.proposal(EMPTY_BYTES, &format!("{why}; NOT NULL, so empty bytes"))
        } else {
            self.proposal(
                KEEP,
                &format!("{why}; NOT NULL and no rule fits its type: review by hand"),
            )
        }
    }

    /// See [`Then::Identifying`].
    fn identifying(&self, lossy: &str, why: &str) -> Proposal {
        if !self.column.unique {
            self.proposal(lossy, why)
        } else if self.fits(PseudonymKind::Token.min_width()) {
            self.proposal(FAKE_TOKEN, &format!("{why}; UNIQUE, so a unique fake"))
        } else {
            self.safe(why)
        }
    }
}
