-- The course shop: customers place orders; each order has a status and line items.
-- Money is stored in integer cents so that sums are exact.
CREATE TABLE customers (
    id      INTEGER PRIMARY KEY,
    name    TEXT NOT NULL,
    email   TEXT NOT NULL UNIQUE,
    city    TEXT NOT NULL,
    country TEXT NOT NULL,
    joined  TEXT NOT NULL            -- ISO date
);

CREATE TABLE products (
    id          INTEGER PRIMARY KEY,
    sku         TEXT NOT NULL UNIQUE,
    name        TEXT NOT NULL,
    category    TEXT NOT NULL,
    price_cents INTEGER NOT NULL CHECK (price_cents > 0),
    stock       INTEGER NOT NULL CHECK (stock >= 0)
);

CREATE TABLE orders (
    id          INTEGER PRIMARY KEY,
    customer_id INTEGER NOT NULL REFERENCES customers (id),
    status      TEXT NOT NULL CHECK (status IN
                    ('pending', 'paid', 'shipped', 'delivered', 'cancelled', 'refunded')),
    created_at  TEXT NOT NULL        -- ISO timestamp, UTC
);

CREATE TABLE order_items (
    order_id         INTEGER NOT NULL REFERENCES orders (id),
    product_id       INTEGER NOT NULL REFERENCES products (id),
    quantity         INTEGER NOT NULL CHECK (quantity > 0),
    unit_price_cents INTEGER NOT NULL CHECK (unit_price_cents > 0),
    PRIMARY KEY (order_id, product_id)
);

CREATE INDEX orders_by_status ON orders (status);
CREATE INDEX orders_by_customer ON orders (customer_id);
