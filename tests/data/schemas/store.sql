-- An online store shaped like the public Dell DVD Store sample (dellstore2): customers with card
-- numbers and expiries as text (`2012/06`), a numeric zip, and a purchase history without any key
-- whose rows repeat. Written here with generated rows (the sample itself is not in this repo).
CREATE TABLE customers (customerid serial PRIMARY KEY, firstname varchar(50) NOT NULL, lastname varchar(50) NOT NULL,
    address1 varchar(50) NOT NULL, address2 varchar(50), city varchar(50) NOT NULL, state varchar(50), zip integer,
    country varchar(50) NOT NULL, region smallint NOT NULL, email varchar(50), phone varchar(50),
    creditcardtype integer NOT NULL, creditcard varchar(50) NOT NULL, creditcardexpiration varchar(50) NOT NULL,
    username varchar(50) NOT NULL UNIQUE, password varchar(50) NOT NULL, age smallint, income integer, gender varchar(1));
INSERT INTO customers (firstname, lastname, address1, city, state, zip, country, region, email, phone, creditcardtype,
                       creditcard, creditcardexpiration, username, password, age, income, gender)
SELECT (ARRAY['Wayne','Kelly','Jamie','Chris','Morgan'])[1 + i % 5], (ARRAY['Garcia','Nguyen','Okafor','Smith','Kowalski'])[1 + i % 5] || i,
       i || '0 Dell Way', (ARRAY['Austin','Round Rock','Plano'])[1 + i % 3], 'TX', 70000 + i * 7, 'US', 1,
       'customer' || i || '@dell.example', '512' || lpad((4000000 + i * 9973)::text, 7, '0'), 1 + i % 5,
       '4' || lpad((i * 1234567)::text, 15, '0'), (2008 + i % 5) || '/' || lpad((1 + i % 12)::text, 2, '0'),
       'user' || i, 'password', 18 + i % 70, 20000 + i * 100, (ARRAY['M','F'])[1 + i % 2]
  FROM generate_series(1, 200) i;
CREATE TABLE cust_hist (customerid integer NOT NULL REFERENCES customers ON DELETE CASCADE, orderid integer NOT NULL, prod_id integer NOT NULL);
INSERT INTO cust_hist SELECT 1 + i % 200, i / 3, i % 50 FROM generate_series(1, 600) i;
INSERT INTO cust_hist SELECT * FROM cust_hist ORDER BY orderid LIMIT 18;
