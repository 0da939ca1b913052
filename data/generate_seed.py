"""Regenerate the shop's seed CSV files (run once by a maintainer; the CSVs are committed).

The output is a pure function of SEED, so running it again rewrites identical files:

    python data/generate_seed.py && git diff --exit-code data/seed
"""

import csv
import random
from datetime import date, datetime, timedelta
from pathlib import Path

SEED = 20251125
OUT = Path(__file__).parent / "seed"
STATUSES = ["pending", "paid", "shipped", "delivered", "cancelled", "refunded"]
STATUS_WEIGHTS = [8, 12, 15, 50, 9, 6]

FIRST = [
    "Ada",
    "Bruno",
    "Chiara",
    "Dmitri",
    "Elif",
    "Farah",
    "Gustav",
    "Hana",
    "Ines",
    "Jonas",
    "Kofi",
    "Léa",
    "Mateo",
    "Nadia",
    "Oskar",
    "Priya",
    "Quentin",
    "Rosa",
    "Søren",
    "Tomás",
    "Uma",
    "Viktor",
    "Wen",
    "Ximena",
    "Yusuf",
    "Zoë",
]
LAST = [
    "Andersen",
    "Becker",
    "Costa",
    "Dubois",
    "Eriksson",
    "Fischer",
    "García",
    "Horvat",
    "Ivanova",
    "Jansen",
    "Kowalski",
    "López",
    "Müller",
    "Nakamura",
    "Okafor",
    "Petrović",
    "Quinn",
    "Rossi",
    "Schmidt",
    "Tanaka",
    "Uzun",
    "Varga",
    "Weber",
    "Yılmaz",
    "Zhang",
]
CITIES = [
    ("Lisbon", "PT"),
    ("Berlin", "DE"),
    ("Kraków", "PL"),
    ("Lyon", "FR"),
    ("Osaka", "JP"),
    ("Toronto", "CA"),
    ("Accra", "GH"),
    ("Reykjavík", "IS"),
    ("São Paulo", "BR"),
    ("Pune", "IN"),
    ("Zürich", "CH"),
    ("Málaga", "ES"),
]
CATEGORIES = {
    "kitchen": ["mug", "teapot", "cutting board", "chef's knife", "spice jar", "kettle", "whisk"],
    "office": ["notebook", "fountain pen", "desk lamp", "stapler", "monitor stand", "sticky notes"],
    "garden": ["watering can", "trowel", "seed tray", "hose reel", "pruning shears", "planter"],
    "outdoor": ["tent", "headlamp", "water bottle", "rain jacket", "camping stove", "daypack"],
    "toys": ["puzzle", "kite", "yo-yo", "building blocks", "board game", "plush bear"],
    "electronics": ["USB-C cable", "power bank", "headphones", "webcam", "keyboard", "mouse"],
}
ADJECTIVES = [
    "Classic",
    "Compact",
    "Deluxe",
    "Eco",
    "Nordic",
    "Café crème",
    "Midnight",
    "Sakura 桜",
    "Terracotta",
    "Alpine",
    "Coastal",
    "Urban",
]


def write(name: str, header: list[str], rows: list[list[object]]) -> None:
    with open(OUT / name, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)


def main() -> None:
    rng = random.Random(SEED)
    OUT.mkdir(exist_ok=True)

    customers = []
    for cid in range(1, 49):
        first, last = rng.choice(FIRST), rng.choice(LAST)
        city, country = rng.choice(CITIES)
        email = f"{first.lower()}.{last.lower()}{cid}@example.com".encode("ascii", "ignore").decode()
        joined = date(2022, 1, 1) + timedelta(days=rng.randrange(0, 900))
        customers.append([cid, f"{first} {last}", email, city, country, joined.isoformat()])
    write("customers.csv", ["id", "name", "email", "city", "country", "joined"], customers)

    products = []
    pid = 0
    for category, nouns in CATEGORIES.items():
        for noun in nouns:
            for adjective in ADJECTIVES:
                if rng.random() < 0.45:
                    continue
                pid += 1
                sku = f"{category[:3].upper()}-{pid:04d}"
                price = rng.randrange(299, 25000, 50)
                products.append([pid, sku, f"{adjective} {noun}", category, price, rng.randrange(0, 400)])
    write("products.csv", ["id", "sku", "name", "category", "price_cents", "stock"], products)

    orders, items = [], []
    start = datetime(2024, 1, 1)
    for oid in range(1, 3001):
        status = rng.choices(STATUSES, STATUS_WEIGHTS)[0]
        created = start + timedelta(minutes=oid * 211 + rng.randrange(0, 200))
        orders.append([oid, rng.randrange(1, len(customers) + 1), status, created.isoformat() + "Z"])
        for product in rng.sample(products, rng.randint(1, 4)):
            items.append([oid, product[0], rng.randint(1, 5), product[4]])
    write("orders.csv", ["id", "customer_id", "status", "created_at"], orders)
    write("order_items.csv", ["order_id", "product_id", "quantity", "unit_price_cents"], items)


if __name__ == "__main__":
    main()
