//! Bank rows as pure functions of a seed.
//!
//! Each table draws from its own random stream, derived from the seed, the table and the first id
//! it will write, so a table can be streamed to the database on its own while only a small summary
//! of its parents stays in memory, and an append run (first id > 1) writes new data rather than a
//! copy of the first run. The "now" of the seeded bank is [`reference_time`], fixed, so the same
//! seed gives the same rows on any day. Nothing here does I/O.

use chrono::{DateTime, Datelike, Duration, NaiveDate, TimeZone, Utc};
use fake::faker::address::en::{CityName, StateAbbr, StreetName};
use fake::faker::company::en::CompanyName;
use fake::faker::internet::en::FreeEmailProvider;
use fake::faker::name::en::{FirstName, LastName};
use fake::rand::rngs::Xoshiro256PlusPlus;
use fake::rand::SeedableRng;
use fake::{Fake, RngExt};
use maskbus_pii::{aba_check_digit, luhn_check_digit, luhn_valid};

/// The seeded bank's "now": accounts open and transactions post before it.
pub fn reference_time() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0)
        .single()
        .unwrap_or_default()
}

/// The random stream of one table for one run.
pub fn stream(seed: u64, table: &str, first_id: i64) -> Xoshiro256PlusPlus {
    // FNV-1a over the table name keeps streams of different tables apart; the multiply spreads
    // the first id so appended runs do not replay the first run's stream.
    let table_hash = table.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    let mixed = seed ^ table_hash ^ (first_id as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    Xoshiro256PlusPlus::seed_from_u64(mixed)
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Customer {
    pub id: i64,
    pub first_name: String,
    pub last_name: String,
    pub email: String,
    pub ssn: String,
    pub date_of_birth: NaiveDate,
    pub phone: Option<String>,
    pub created_at: DateTime<Utc>,
}

impl Customer {
    /// The columns of a customer row, in table order.
    pub const COLUMNS: [&'static str; 8] = [
        "id",
        "first_name",
        "last_name",
        "email",
        "ssn",
        "date_of_birth",
        "phone",
        "created_at",
    ];

    /// The row as Postgres prints it (`col::text`, UTC), in [`Customer::COLUMNS`] order: what a
    /// producer reads and masks.
    pub fn text_values(&self) -> Vec<Option<String>> {
        vec![
            Some(self.id.to_string()),
            Some(self.first_name.clone()),
            Some(self.last_name.clone()),
            Some(self.email.clone()),
            Some(self.ssn.clone()),
            Some(self.date_of_birth.to_string()),
            self.phone.clone(),
            Some(self.created_at.format("%Y-%m-%d %H:%M:%S+00").to_string()),
        ]
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Address {
    pub id: i64,
    pub customer_id: i64,
    pub street: String,
    pub city: String,
    pub state: String,
    pub zip: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AccountType {
    Checking,
    Savings,
    Credit,
}

impl AccountType {
    pub fn as_str(self) -> &'static str {
        match self {
            AccountType::Checking => "checking",
            AccountType::Savings => "savings",
            AccountType::Credit => "credit",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Account {
    pub id: i64,
    pub customer_id: i64,
    pub account_number: String,
    pub routing_number: String,
    pub account_type: AccountType,
    pub balance_cents: i64,
    pub opened_at: DateTime<Utc>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Card {
    pub id: i64,
    pub account_id: i64,
    pub card_number: String,
    pub brand: &'static str,
    pub expiry: NaiveDate,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transaction {
    pub id: i64,
    pub account_id: i64,
    pub card_id: Option<i64>,
    pub amount_cents: i64,
    pub posted_at: DateTime<Utc>,
    pub merchant: String,
    pub description: String,
}

/// What children need to know of a customer.
#[derive(Clone, Copy, Debug)]
pub struct CustomerSummary {
    pub id: i64,
    pub created_at: DateTime<Utc>,
}

/// What children need to know of an account, including the cards issued on it.
#[derive(Clone, Copy, Debug)]
pub struct AccountSummary {
    pub id: i64,
    pub account_type: AccountType,
    pub opened_at: DateTime<Utc>,
    pub first_card_id: i64,
    pub card_count: u8,
}

fn random_time_between<R: RngExt>(
    rng: &mut R,
    start: DateTime<Utc>,
    end: DateTime<Utc>,
) -> DateTime<Utc> {
    let span = (end - start).num_seconds().max(1);
    start + Duration::seconds(rng.random_range(0..span))
}

fn ascii_lower(name: &str) -> String {
    name.chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// A US SSN that could have been issued: area 001-899 but not 666, group 01-99, serial 0001-9999.
pub fn ssn<R: RngExt>(rng: &mut R) -> String {
    let area = loop {
        let area: u16 = rng.random_range(1..900);
        if area != 666 {
            break area;
        }
    };
    let group: u8 = rng.random_range(1..100);
    let serial: u16 = rng.random_range(1..10000);
    format!("{area:03}-{group:02}-{serial:04}")
}

/// A North American phone number, `(NXX) NXX-XXXX`.
pub fn phone<R: RngExt>(rng: &mut R) -> String {
    let area: u16 = rng.random_range(200..1000);
    let exchange: u16 = rng.random_range(200..1000);
    let line: u16 = rng.random_range(0..10000);
    format!("({area}) {exchange}-{line:04}")
}

/// Generates `count` customers with ids from `first_id`.
pub fn customers(seed: u64, first_id: i64, count: u64) -> impl Iterator<Item = Customer> {
    let mut rng = stream(seed, "customers", first_id);
    let now = reference_time();
    let bank_founded = Utc
        .with_ymd_and_hms(2010, 1, 1, 0, 0, 0)
        .single()
        .unwrap_or_default();
    (0..count as i64).map(move |offset| {
        let id = first_id + offset;
        let first_name: &str = FirstName().fake_with_rng(&mut rng);
        let last_name: &str = LastName().fake_with_rng(&mut rng);
        let provider: &str = FreeEmailProvider().fake_with_rng(&mut rng);
        let separator = if rng.random_bool(0.5) { "." } else { "_" };
        // The id makes every email unique without a lookup: names carry no digits.
        let email = format!(
            "{}{separator}{}{id}@{provider}",
            ascii_lower(first_name),
            ascii_lower(last_name)
        );
        let age_days = rng.random_range(18 * 366..90 * 365);
        let date_of_birth = (now - Duration::days(age_days)).date_naive();
        let adult_since = Utc
            .with_ymd_and_hms(date_of_birth.year() + 18, date_of_birth.month(), 1, 0, 0, 0)
            .single()
            .unwrap_or(bank_founded);
        let created_at = random_time_between(&mut rng, adult_since.max(bank_founded), now);
        let ssn = ssn(&mut rng);
        let phone = if rng.random_bool(0.9) {
            Some(phone(&mut rng))
        } else {
            None
        };
        Customer {
            id,
            first_name: first_name.to_string(),
            last_name: last_name.to_string(),
            email,
            ssn,
            date_of_birth,
            phone,
            created_at,
        }
    })
}

/// One home address per customer.
pub fn addresses(
    seed: u64,
    first_id: i64,
    customers: &[CustomerSummary],
) -> impl Iterator<Item = Address> + '_ {
    let mut rng = stream(seed, "addresses", first_id);
    customers.iter().enumerate().map(move |(i, customer)| {
        let number: u32 = rng.random_range(1..20000);
        let street: String = StreetName().fake_with_rng(&mut rng);
        Address {
            id: first_id + i as i64,
            customer_id: customer.id,
            street: format!("{number} {street}"),
            city: CityName().fake_with_rng(&mut rng),
            state: StateAbbr().fake_with_rng(&mut rng),
            zip: format!("{:05}", rng.random_range(501..99951)),
        }
    })
}

/// The routing numbers of the banks that hold the seeded accounts: a dozen, like a real market.
pub fn routing_numbers(seed: u64) -> Vec<String> {
    let mut rng = stream(seed, "routing_numbers", 0);
    // First two digits: Federal Reserve districts 01-12 (and 21-32 for thrifts).
    (0..12)
        .map(|_| {
            let district: u8 = if rng.random_bool(0.8) {
                rng.random_range(1..13)
            } else {
                rng.random_range(21..33)
            };
            let mut first_eight = [0u8; 8];
            first_eight[0] = district / 10;
            first_eight[1] = district % 10;
            for digit in &mut first_eight[2..] {
                *digit = rng.random_range(0..10);
            }
            let check = aba_check_digit(&first_eight);
            first_eight
                .iter()
                .chain(std::iter::once(&check))
                .map(|d| char::from(b'0' + d))
                .collect()
        })
        .collect()
}

/// One to three accounts per customer: the first is a checking account.
pub fn accounts<'a>(
    seed: u64,
    first_id: i64,
    customers: &'a [CustomerSummary],
    routing: &'a [String],
) -> impl Iterator<Item = Account> + 'a {
    let mut rng = stream(seed, "accounts", first_id);
    let now = reference_time();
    let mut next_id = first_id;
    customers.iter().flat_map(move |customer| {
        let count = rng.random_range(1..=3);
        (0..count)
            .map(|n| {
                let account_type = match (n, rng.random_range(0..2)) {
                    (0, _) => AccountType::Checking,
                    (_, 0) => AccountType::Savings,
                    _ => AccountType::Credit,
                };
                let balance_cents = match account_type {
                    AccountType::Checking => rng.random_range(0..2_000_000),
                    AccountType::Savings => rng.random_range(0..10_000_000),
                    AccountType::Credit => -rng.random_range(0..500_000),
                };
                let account = Account {
                    id: next_id,
                    customer_id: customer.id,
                    account_number: rng.random_range(100_000_000u32..1_000_000_000).to_string(),
                    routing_number: routing[rng.random_range(0..routing.len())].clone(),
                    account_type,
                    balance_cents,
                    opened_at: random_time_between(&mut rng, customer.created_at, now),
                };
                next_id += 1;
                account
            })
            .collect::<Vec<_>>()
    })
}

/// The card brands we issue, with their prefixes. All 16 digits long.
const BRANDS: [(&str, &[&str]); 3] = [
    ("Visa", &["4"]),
    (
        "Mastercard",
        &["51", "52", "53", "54", "55", "2221", "2720"],
    ),
    ("Discover", &["6011", "65"]),
];

/// A Luhn-valid 16-digit card number of one of `BRANDS`.
pub fn card_number<R: RngExt>(rng: &mut R) -> (&'static str, String) {
    let (brand, prefixes) = BRANDS[rng.random_range(0..BRANDS.len())];
    let prefix = prefixes[rng.random_range(0..prefixes.len())];
    loop {
        let mut digits: Vec<u8> = prefix.bytes().map(|b| b - b'0').collect();
        while digits.len() < 15 {
            digits.push(rng.random_range(0..10));
        }
        digits.push(luhn_check_digit(&digits));
        let number: String = digits.iter().map(|d| char::from(b'0' + d)).collect();
        // Checked with the luhn crate, not only by construction: a card that fails Luhn would make
        // the seeded bank unrealistic and the audit's tests meaningless.
        if luhn_valid(&number) {
            return (brand, number);
        }
    }
}

/// How many cards each account gets: checking accounts a debit card (most of the time), credit
/// accounts one card and sometimes a replacement, savings none.
pub fn card_count<R: RngExt>(rng: &mut R, account_type: AccountType) -> u8 {
    match account_type {
        AccountType::Checking => u8::from(rng.random_bool(0.85)),
        AccountType::Credit => 1 + u8::from(rng.random_bool(0.2)),
        AccountType::Savings => 0,
    }
}

/// Cards for accounts whose summaries already carry their card ids and counts.
pub fn cards(
    seed: u64,
    first_id: i64,
    accounts: &[AccountSummary],
) -> impl Iterator<Item = Card> + '_ {
    let mut rng = stream(seed, "cards", first_id);
    let now = reference_time().date_naive();
    accounts.iter().flat_map(move |account| {
        (0..account.card_count)
            .map(|n| {
                let (brand, card_number) = card_number(&mut rng);
                let months_ahead = rng.random_range(-6i32..60);
                let month0 = now.month0() as i32 + months_ahead;
                let expiry = NaiveDate::from_ymd_opt(
                    now.year() + month0.div_euclid(12),
                    month0.rem_euclid(12) as u32 + 1,
                    1,
                )
                .unwrap_or(now);
                Card {
                    id: account.first_card_id + i64::from(n),
                    account_id: account.id,
                    card_number,
                    brand,
                    expiry,
                }
            })
            .collect::<Vec<_>>()
    })
}

const PURCHASE_KINDS: [&str; 4] = [
    "POS PURCHASE",
    "ONLINE PURCHASE",
    "CONTACTLESS",
    "RECURRING",
];
const TRANSFER_KINDS: [(&str, &str); 4] = [
    ("ACH DEPOSIT", "PAYROLL"),
    ("ACH DEBIT", "UTILITY BILL"),
    ("TRANSFER", "SAVINGS"),
    ("ATM WITHDRAWAL", "CASH"),
];

/// `count` transactions spread uniformly over `accounts`; about seven in ten on an account with
/// a card are card payments.
pub fn transactions(
    seed: u64,
    first_id: i64,
    count: u64,
    accounts: &[AccountSummary],
) -> impl Iterator<Item = Transaction> + '_ {
    let mut rng = stream(seed, "transactions", first_id);
    let now = reference_time();
    (0..count as i64)
        .filter(|_| !accounts.is_empty())
        .map(move |offset| {
            let account = accounts[rng.random_range(0..accounts.len())];
            let card_id = (account.card_count > 0 && rng.random_bool(0.7)).then(|| {
                account.first_card_id + i64::from(rng.random_range(0..account.card_count))
            });
            let posted_at = random_time_between(&mut rng, account.opened_at, now);
            let (amount_cents, merchant, description) = if card_id.is_some() {
                let merchant: String = CompanyName().fake_with_rng(&mut rng);
                let kind = PURCHASE_KINDS[rng.random_range(0..PURCHASE_KINDS.len())];
                let description = format!("{kind} {}", merchant.to_uppercase());
                (-rng.random_range(100..50_000), merchant, description)
            } else {
                let (kind, what) = TRANSFER_KINDS[rng.random_range(0..TRANSFER_KINDS.len())];
                let amount = if kind == "ACH DEPOSIT" {
                    rng.random_range(50_000..500_000)
                } else {
                    -rng.random_range(2_000..200_000)
                };
                (amount, what.to_string(), format!("{kind} {what}"))
            };
            Transaction {
                id: first_id + offset,
                account_id: account.id,
                card_id,
                amount_cents,
                posted_at,
                merchant,
                description,
            }
        })
}

/// Formats cents as a numeric literal, `-12.34`.
pub fn cents_text(cents: i64) -> String {
    let sign = if cents < 0 { "-" } else { "" };
    let abs = cents.unsigned_abs();
    format!("{sign}{}.{:02}", abs / 100, abs % 100)
}

#[cfg(test)]
mod tests {
    use super::*;
    use maskbus_pii::{is_aba_routing_text, is_issuable_ssn_text};

    #[test]
    fn same_seed_same_customers_other_seed_other_customers() {
        let a: Vec<_> = customers(42, 1, 50).collect();
        let b: Vec<_> = customers(42, 1, 50).collect();
        let c: Vec<_> = customers(43, 1, 50).collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn generated_identifiers_are_realistic() {
        let mut rng = stream(7, "test", 0);
        for _ in 0..20_000 {
            assert!(is_issuable_ssn_text(&ssn(&mut rng)));
            let (_, number) = card_number(&mut rng);
            assert_eq!(number.len(), 16);
            assert!(maskbus_pii::luhn_valid(&number), "{number}");
        }
        for routing in routing_numbers(7) {
            assert!(is_aba_routing_text(&routing), "{routing}");
        }
    }

    #[test]
    fn customers_are_adults_with_unique_emails() {
        let all: Vec<_> = customers(1, 1, 5000).collect();
        let emails: std::collections::HashSet<_> = all.iter().map(|c| c.email.as_str()).collect();
        assert_eq!(emails.len(), all.len());
        let now = reference_time().date_naive();
        for c in &all {
            let age = now.years_since(c.date_of_birth).unwrap_or(0);
            assert!((18..=90).contains(&age), "{age}");
            assert!(c.created_at <= reference_time());
        }
    }

    #[test]
    fn cents_are_formatted_as_numeric() {
        assert_eq!(cents_text(0), "0.00");
        assert_eq!(cents_text(-5), "-0.05");
        assert_eq!(cents_text(123_456), "1234.56");
    }
}
