"""SQL prompt set: queries, joins, window functions, DDL, debugging, dialects and tuning.
Composed from hand-written schemas and request templates, plus standalone questions."""

import random

# Each schema: a child table with a foreign key to a parent table, described
# well enough that every template below produces a sensible request.
_SCHEMAS = [
    dict(t="orders", ddl="orders(id, customer_id, total, status, created_at)",
         p="customers", pddl="customers(id, name, email, country, signup_date)",
         fk="customer_id", item="order", items="orders", parent="customer", parents="customers",
         pname="name", pgroup="country", num="total", num_label="order value",
         date="created_at", cat="status", cats=("pending", "shipped", "cancelled")),
    dict(t="employees", ddl="employees(id, name, department_id, salary, job_title, hire_date)",
         p="departments", pddl="departments(id, name, location, budget)",
         fk="department_id", item="employee", items="employees", parent="department",
         parents="departments", pname="name", pgroup="location", num="salary",
         num_label="salary", date="hire_date", cat="job_title",
         cats=("Engineer", "Analyst", "Manager")),
    dict(t="books", additive=False, ddl="books(id, title, author_id, genre, price, published_on)",
         p="authors", pddl="authors(id, name, country, birth_year)",
         fk="author_id", item="book", items="books", parent="author", parents="authors",
         pname="name", pgroup="country", num="price", num_label="book price",
         date="published_on", cat="genre", cats=("fantasy", "history", "poetry")),
    dict(t="exam_results", additive=False, ddl="exam_results(id, student_id, subject, score, taken_on)",
         p="students", pddl="students(id, full_name, grade_level, school_id)",
         fk="student_id", item="exam result", items="exam results", parent="student",
         parents="students", pname="full_name", pgroup="grade_level", num="score",
         num_label="exam score", date="taken_on", cat="subject",
         cats=("math", "biology", "history")),
    dict(t="posts", ddl="posts(id, user_id, title, category, views, published_at)",
         p="users", pddl="users(id, username, country, joined_at)",
         fk="user_id", item="post", items="posts", parent="user", parents="users",
         pname="username", pgroup="country", num="views", num_label="view count",
         date="published_at", cat="category", cats=("tech", "travel", "food")),
    dict(t="ratings", additive=False, ddl="ratings(id, movie_id, user_id, stars, platform, rated_at)",
         p="movies", pddl="movies(id, title, genre, release_year)",
         fk="movie_id", item="rating", items="ratings", parent="movie", parents="movies",
         pname="title", pgroup="genre", num="stars", num_label="star rating",
         date="rated_at", cat="platform", cats=("web", "ios", "android")),
    dict(t="flights", ddl="flights(id, airline_id, origin, destination, delay_minutes, departure_time)",
         p="airlines", pddl="airlines(id, name, country, founded_year)",
         fk="airline_id", item="flight", items="flights", parent="airline", parents="airlines",
         pname="name", pgroup="country", num="delay_minutes", num_label="delay in minutes",
         date="departure_time", cat="origin", cats=("JFK", "LHR", "NRT")),
    dict(t="appointments", ddl="appointments(id, patient_id, doctor_name, fee, status, scheduled_at)",
         p="patients", pddl="patients(id, name, birth_date, city)",
         fk="patient_id", item="appointment", items="appointments", parent="patient",
         parents="patients", pname="name", pgroup="city", num="fee", num_label="appointment fee",
         date="scheduled_at", cat="status", cats=("booked", "completed", "no_show")),
    dict(t="products", additive=False, ddl="products(id, name, supplier_id, category, unit_price, stock_qty, added_on)",
         p="suppliers", pddl="suppliers(id, name, country, rating)",
         fk="supplier_id", item="product", items="products", parent="supplier",
         parents="suppliers", pname="name", pgroup="country", num="unit_price",
         num_label="unit price", date="added_on", cat="category",
         cats=("toys", "garden", "kitchen")),
    dict(t="transactions", ddl="transactions(id, account_id, amount, kind, created_at)",
         p="accounts", pddl="accounts(id, owner_name, branch, balance, opened_on)",
         fk="account_id", item="transaction", items="transactions", parent="account",
         parents="accounts", pname="owner_name", pgroup="branch", num="amount",
         num_label="transaction amount", date="created_at", cat="kind",
         cats=("deposit", "withdrawal", "fee")),
    dict(t="trips", ddl="trips(id, driver_id, rider_id, distance_km, fare, payment_type, started_at)",
         p="drivers", pddl="drivers(id, name, city, vehicle_type)",
         fk="driver_id", item="trip", items="trips", parent="driver", parents="drivers",
         pname="name", pgroup="city", num="fare", num_label="fare",
         date="started_at", cat="payment_type", cats=("card", "cash", "wallet")),
    dict(t="plays", ddl="plays(id, track_id, listener_id, seconds_played, device, played_at)",
         p="tracks", pddl="tracks(id, title, artist, genre, duration_sec)",
         fk="track_id", item="play", items="plays", parent="track", parents="tracks",
         pname="title", pgroup="genre", num="seconds_played", num_label="listening time",
         date="played_at", cat="device", cats=("phone", "desktop", "smart_speaker")),
    dict(t="tickets", ddl="tickets(id, agent_id, priority, status, resolution_hours, opened_at)",
         p="agents", pddl="agents(id, name, team, hired_on)",
         fk="agent_id", item="ticket", items="tickets", parent="support agent",
         parents="support agents", pname="name", pgroup="team", num="resolution_hours",
         num_label="resolution time", date="opened_at", cat="priority",
         cats=("low", "high", "urgent")),
    dict(t="listings", ddl="listings(id, broker_id, city, price, bedrooms, property_type, listed_on)",
         p="brokers", pddl="brokers(id, name, agency, license_year)",
         fk="broker_id", item="listing", items="listings", parent="broker", parents="brokers",
         pname="name", pgroup="agency", num="price", num_label="asking price",
         date="listed_on", cat="property_type", cats=("condo", "house", "townhouse")),
    dict(t="order_lines", ddl="order_lines(id, menu_item_id, quantity, line_total, channel, ordered_at)",
         p="menu_items", pddl="menu_items(id, name, course, price)",
         fk="menu_item_id", item="order line", items="order lines", parent="menu item",
         parents="menu items", pname="name", pgroup="course", num="line_total",
         num_label="revenue", date="ordered_at", cat="channel",
         cats=("dine_in", "takeaway", "delivery")),
    dict(t="readings", additive=False, ddl="readings(id, sensor_id, value, unit, recorded_at)",
         p="sensors", pddl="sensors(id, label, building, installed_on)",
         fk="sensor_id", item="reading", items="readings", parent="sensor", parents="sensors",
         pname="label", pgroup="building", num="value", num_label="measured value",
         date="recorded_at", cat="unit", cats=("celsius", "percent", "ppm")),
    dict(t="gym_visits", ddl="gym_visits(id, member_id, activity, duration_min, checked_in_at)",
         p="members", pddl="members(id, name, plan, joined_on)",
         fk="member_id", item="gym visit", items="gym visits", parent="member",
         parents="members", pname="name", pgroup="plan", num="duration_min",
         num_label="workout time", date="checked_in_at", cat="activity",
         cats=("swim", "weights", "yoga")),
    dict(t="ticket_sales", ddl="ticket_sales(id, event_id, buyer_email, seat_section, price_paid, sold_at)",
         p="events", pddl="events(id, name, venue, capacity, starts_at)",
         fk="event_id", item="ticket sale", items="ticket sales", parent="event",
         parents="events", pname="name", pgroup="venue", num="price_paid",
         num_label="ticket revenue", date="sold_at", cat="seat_section",
         cats=("floor", "balcony", "vip")),
    dict(t="commits", ddl="commits(id, repo_id, author_email, branch, lines_added, committed_at)",
         p="repositories", pddl="repositories(id, name, language, stars)",
         fk="repo_id", item="commit", items="commits", parent="repository",
         parents="repositories", pname="name", pgroup="language", num="lines_added",
         num_label="lines added", date="committed_at", cat="branch",
         cats=("main", "develop", "release")),
    dict(t="time_entries", ddl="time_entries(id, project_id, employee_id, task_type, hours, work_date)",
         p="projects", pddl="projects(id, name, client, budget)",
         fk="project_id", item="time entry", items="time entries", parent="project",
         parents="projects", pname="name", pgroup="client", num="hours",
         num_label="hours logged", date="work_date", cat="task_type",
         cats=("design", "coding", "review")),
    dict(t="shipments", ddl="shipments(id, warehouse_id, carrier, weight_kg, shipped_at)",
         p="warehouses", pddl="warehouses(id, name, region, capacity)",
         fk="warehouse_id", item="shipment", items="shipments", parent="warehouse",
         parents="warehouses", pname="name", pgroup="region", num="weight_kg",
         num_label="shipped weight", date="shipped_at", cat="carrier",
         cats=("DHL", "UPS", "FedEx")),
    dict(t="reviews", additive=False, ddl="reviews(id, hotel_id, guest_name, trip_type, score, posted_at)",
         p="hotels", pddl="hotels(id, name, city, star_class)",
         fk="hotel_id", item="review", items="reviews", parent="hotel", parents="hotels",
         pname="name", pgroup="city", num="score", num_label="review score",
         date="posted_at", cat="trip_type", cats=("business", "family", "solo")),
]

# Request templates. Placeholders come from a schema plus: cv, cv2, cv3 (category
# values), year, n (small threshold), k (top-k size). A leading "+" marks templates
# that sum the numeric column, which only makes sense for additive quantities.
_TEMPLATES = {
    "select": [  # select / filter / sort
        "Given the table {ddl}, write a SQL query that returns every {item} whose {cat} is "
        "'{cv}', newest first.",
        "Write a query against {ddl} that lists the {k} {items} with the highest {num}. "
        "Show only the id, {num}, and {date} columns.",
    ],
    "join": [  # joins
        "How do I count the number of {items} for each {parent}? The tables are {ddl} and "
        "{pddl}. {Parents} with zero {items} should still appear with a count of 0.",
        "+Tables: {ddl} and {pddl}. Write a query that returns the top {k} {parents} by total "
        "{num_label}, showing each {parent}'s {pname} next to the total.",
        "Write a SQL query that finds {parents} with no {items} at all. Schema: {pddl} and {ddl}. "
        "Use either a LEFT JOIN or NOT EXISTS, and say which one you picked.",
        "Given {pddl} and {ddl}, compute the average {num_label} per {pgroup}. Order the result "
        "from highest to lowest.",
    ],
    "group-by": [  # group by / having
        "Using {ddl}, find every {fk} that has more than {n} {items}. Briefly explain why the "
        "condition belongs in HAVING rather than WHERE.",
        "Count the {items} per calendar month in {year} using {ddl}. Months with no {items} "
        "can be left out.",
        "+From {ddl}, show each {cat} value with its share of the total {num_label} as a "
        "percentage rounded to one decimal place.",
    ],
    "window": [  # window functions
        "Using a window function on {ddl}, rank the {items} by {num} within each {cat}. "
        "Rows with equal {num} should get the same rank.",
        "+Write a query that shows each {item} from {t} together with a running total of {num} "
        "ordered by {date}. The table is {ddl}.",
        "For each {parent}, I want to see every {item}'s {num} next to the previous {item}'s "
        "{num}. Table: {ddl}. Which window function should I use, and what does the query look like?",
        "Given {ddl}, return only the most recent {item} for each {fk}. Use ROW_NUMBER() in "
        "your answer.",
        "+Write a query that computes a 7-day moving average of the daily total {num} from {ddl}.",
        "Split the {items} in {ddl} into four quartiles by {num} with NTILE, and report the "
        "minimum and maximum {num} in each quartile.",
    ],
    "subquery": [  # subqueries / CTEs
        "Find all {items} whose {num} value is greater than the average {num} across the whole "
        "{t} table. Use a subquery. Table: {ddl}.",
        "Write a query with a correlated subquery that returns the {items} whose {num} value is "
        "above the average for their own {parent}. Table: {ddl}.",
        "+Using a CTE, compute the total {num_label} per month in {year} from {ddl}, then keep "
        "only the months that beat that year's monthly average.",
        "+Compare each {parent}'s total {num_label} in {year} with the year before, showing both "
        "totals and the difference. The data is in {ddl}; a CTE is fine.",
        "With the tables {pddl} and {ddl}, write the same query twice, once with IN and once "
        "with EXISTS, listing {parents} that have at least one {item} with {cat} = '{cv}'. "
        "When can the two versions behave differently?",
    ],
    "ddl-dml": [  # DDL / DML
        "Write a PostgreSQL CREATE TABLE statement for {ddl}. Pick sensible data types, add a "
        "primary key, and make {fk} a foreign key to {p}(id).",
        "How do I add a NOT NULL column called updated_at to the existing {t} table without "
        "breaking inserts that don't set it? Current schema: {ddl}.",
        "Write a single INSERT statement that adds three new rows to {ddl} with realistic "
        "values.",
        "Write an UPDATE statement for {ddl} that changes {cat} from '{cv}' to '{cv2}' for every "
        "row whose {date} is before {year}-01-01.",
        "The table {ddl} contains duplicate rows that share the same {fk}, {num}, and {date}. "
        "How do I delete the duplicates but keep the row with the lowest id?",
        "+Create a view named {p}_summary that shows each {parent}'s {pname}, the number of "
        "{items}, and the total {num}. Tables: {pddl} and {ddl}.",
    ],
    "index": [  # indexes / performance
        "Which index would help this query, and why?\n"
        "SELECT * FROM {t} WHERE {fk} = 42 AND {date} >= '{year}-01-01' ORDER BY {date};",
        "This query is slow on a large {t} table even though {date} is indexed:\n"
        "SELECT COUNT(*) FROM {t} WHERE EXTRACT(YEAR FROM {date}) = {year};\n"
        "How would you rewrite it so the index can be used?",
        "How do I page through the {t} table 25 rows at a time, ordered by {date}? Show a "
        "LIMIT/OFFSET version and a keyset version, and say which one scales better.",
        "My query on {t} uses SELECT * but only needs {num} and {date}. Why is that a problem, "
        "and what could I gain by listing the columns?",
    ],
    "explain": [  # explain a query
        "Explain what this query does:\n"
        "SELECT {cat}, COUNT(*) AS n, AVG({num}) AS avg_{num}\n"
        "FROM {t}\n"
        "WHERE {date} >= '{year}-01-01'\n"
        "GROUP BY {cat}\n"
        "HAVING COUNT(*) > {n}\n"
        "ORDER BY n DESC;",
        "In plain English, what does this query return?\n"
        "SELECT p.id, p.{pname}, MAX(c.{date}) AS last_activity\n"
        "FROM {p} p\n"
        "LEFT JOIN {t} c ON c.{fk} = p.id\n"
        "GROUP BY p.id, p.{pname};",
    ],
    "fix": [  # fix a broken query
        "This query throws an error. What is wrong, and how do I fix it?\n"
        "SELECT {fk}, {cat}, SUM({num})\n"
        "FROM {t}\n"
        "GROUP BY {fk};",
        "Why does this query fail, and what is the corrected version?\n"
        "SELECT {fk}, COUNT(*) FROM {t} WHERE COUNT(*) > {n} GROUP BY {fk};",
        "I get a 'column does not exist' error from this query. Why, and how should it be "
        "written?\nSELECT {num} * 1.2 AS adjusted FROM {t} WHERE adjusted > 100;",
        "In {ddl}, some rows have a NULL {cat}. Why does WHERE {cat} <> '{cv}' leave those rows "
        "out, and how should I rewrite the filter to include them?",
    ],
    "dialect": [  # dialects
        "Convert this MySQL query to PostgreSQL:\n"
        "SELECT {fk}, IFNULL(SUM({num}), 0) AS total, DATE_FORMAT({date}, '%Y-%m') AS month\n"
        "FROM {t}\n"
        "GROUP BY {fk}, month\n"
        "LIMIT 20, 10;",
        "How would this PostgreSQL query be written in SQL Server (T-SQL)?\n"
        "SELECT * FROM {t} WHERE {date} > NOW() - INTERVAL '7 days' ORDER BY {num} DESC LIMIT 5;",
    ],
    "report": [  # reporting patterns
        "Using conditional aggregation on {ddl}, produce one row per {fk} with separate count "
        "columns for the {cat} values '{cv}', '{cv2}', and '{cv3}'.",
        "Using {ddl}, count the {items} per day by {date} and return the days whose count is "
        "higher than the previous day's count. A window function such as LAG is fine.",
        "Write a query on {ddl} that labels each {item} as 'low', 'medium', or 'high' based on "
        "{num}, using CASE with thresholds of your choice, and then counts the {items} in each "
        "label.",
        "How many distinct {parents} had at least one {item} in the last 30 days? Write the "
        "PostgreSQL query for {ddl}.",
        "How do I compute the median {num} per {cat} from {ddl} in PostgreSQL?",
        "Using PostgreSQL's generate_series, list every day of March {year} with the number of "
        "{items} recorded in {ddl}, showing 0 for days that have none.",
    ],
}

# Standalone conceptual questions, each written once.
_CONCEPTS = [
    "What is the difference between WHERE and HAVING in SQL? Give a one-line example of each.",
    "Explain the difference between INNER JOIN, LEFT JOIN, and FULL OUTER JOIN in a few sentences.",
    "What does a database index actually do, and what does it cost to add too many of them?",
    "What is the difference between UNION and UNION ALL, and which one is usually faster?",
    "Explain first, second, and third normal form briefly, with an example of a table that breaks 1NF.",
    "What do the letters in ACID stand for? Give one sentence for each.",
    "When would you choose a CTE over a subquery in SQL?",
    "What is the difference between DELETE, TRUNCATE, and DROP TABLE?",
    "What is SQL injection, and how do parameterized queries prevent it? Show a short Python "
    "example that uses sqlite3.",
    "What's the difference between ROW_NUMBER(), RANK(), and DENSE_RANK()? Show what each one "
    "returns for the scores 90, 85, 85, 70.",
    "I have a composite index on (last_name, first_name). Which queries can use it, and which cannot?",
    "What does EXPLAIN ANALYZE show in PostgreSQL, and what should I look at first?",
    "Is NULL = NULL true in SQL? Explain, and show how to compare two nullable columns safely.",
    "What is the difference between CHAR, VARCHAR, and TEXT in PostgreSQL?",
    "What does ON DELETE CASCADE do on a foreign key, and when can it be dangerous?",
    "Explain what a covering index is, with a small example.",
    "What is the difference between a clustered and a non-clustered index in SQL Server?",
    "How is a materialized view different from a regular view, and when would you refresh one?",
    "Why should money be stored as DECIMAL or NUMERIC rather than FLOAT?",
    "Name the four transaction isolation levels from the SQL standard and explain what a dirty read is.",
    "How does COALESCE work? Give two practical examples.",
    "What is the difference between a primary key and a unique constraint?",
    "What is a recursive CTE? Show one that generates the numbers 1 to 10.",
    "Explain what a CROSS JOIN produces. If one table has 4 rows and the other has 6, how many rows come back?",
    "How can I list all tables in a SQLite database, both from the sqlite3 shell and with a SQL query?",
    "What does DISTINCT ON do in PostgreSQL? Give an example.",
    "Explain the N+1 query problem and how a single JOIN avoids it.",
    "What is a database deadlock, and how can application code make one less likely?",
    "What is the difference between a star schema and a snowflake schema?",
    "Explain what a partial index is in PostgreSQL and give an example of when it helps.",
    "What is the difference between TIMESTAMP and TIMESTAMPTZ in PostgreSQL?",
    "In what order are the clauses of a SELECT statement logically evaluated?",
    "How do I do a case-insensitive search for names containing 'smith' in PostgreSQL and in MySQL?",
    "Should I use UUIDs or auto-incrementing integers as primary keys? Give the main pros and cons.",
    "What does GROUP BY ROLLUP do? Give a short example with region and product columns.",
    "Why might PostgreSQL choose a sequential scan even though the filtered column has an index?",
    "How do I rename a column in PostgreSQL, MySQL, and SQLite?",
    "What is the LATERAL keyword for in PostgreSQL? Show a small example.",
    "What is the difference between an OLTP and an OLAP database workload?",
    "What does a CHECK constraint do? Write one that keeps a discount column between 0 and 100.",
]

# Hand-written queries to explain or fix, each a different situation.
_SNIPPETS = [
    "Explain step by step what this recursive query returns:\n"
    "WITH RECURSIVE chain AS (\n"
    "  SELECT id, manager_id, name, 1 AS depth FROM employees WHERE id = 17\n"
    "  UNION ALL\n"
    "  SELECT e.id, e.manager_id, e.name, c.depth + 1\n"
    "  FROM employees e JOIN chain c ON e.id = c.manager_id\n"
    ")\n"
    "SELECT name, depth FROM chain;",
    "What does this query find?\n"
    "SELECT DISTINCT a.user_id\n"
    "FROM logins a\n"
    "JOIN logins b ON b.user_id = a.user_id AND b.login_date = a.login_date + 1;",
    "What question does this query answer?\n"
    "SELECT customer_id FROM purchases\n"
    "GROUP BY customer_id\n"
    "HAVING COUNT(DISTINCT product_id) = (SELECT COUNT(*) FROM products);",
    "What does this return, and what happens if fewer than three distinct salaries exist?\n"
    "SELECT DISTINCT salary FROM employees ORDER BY salary DESC LIMIT 1 OFFSET 2;",
    "Explain this query in one or two sentences:\n"
    "SELECT d.name FROM departments d\n"
    "WHERE NOT EXISTS (\n"
    "  SELECT 1 FROM employees e WHERE e.department_id = d.id AND e.salary < 50000\n"
    ");",
    "This query never returns any rows, even though some users have no email. Why?\n"
    "SELECT name FROM users WHERE email = NULL;",
    "My LEFT JOIN seems to act like an INNER JOIN: orders without payments disappear. What "
    "is going on?\n"
    "SELECT o.id, p.amount FROM orders o\n"
    "LEFT JOIN payments p ON p.order_id = o.id\n"
    "WHERE p.status = 'paid';",
    "This query misses events that start during the day on May 31. Why, and how do I fix it?\n"
    "SELECT * FROM events WHERE starts_at BETWEEN '2024-05-01' AND '2024-05-31';",
    "In PostgreSQL this fails with 'column \"Alice\" does not exist'. What is the mistake?\n"
    "SELECT * FROM users WHERE name = \"Alice\";",
    "Why does this report a count of 1 for customers who have never ordered?\n"
    "SELECT c.id, COUNT(*) FROM customers c\n"
    "LEFT JOIN orders o ON o.customer_id = c.id\n"
    "GROUP BY c.id;",
    "The totals from this query are much too high. What causes it, and how can I fix it?\n"
    "SELECT c.id, SUM(o.total) AS order_total, COUNT(p.id) AS payments\n"
    "FROM customers c\n"
    "JOIN orders o ON o.customer_id = c.id\n"
    "JOIN payments p ON p.customer_id = c.id\n"
    "GROUP BY c.id;",
    "Why does this return 0 for almost every team, and how do I get a decimal win rate?\n"
    "SELECT name, wins / games AS win_rate FROM teams;",
    "Why can't this query use the index on products(name), and what are the alternatives?\n"
    "SELECT * FROM products WHERE name LIKE '%phone%';",
    "Why does this return no rows when the blocked_users table contains a NULL user_id?\n"
    "SELECT * FROM users WHERE id NOT IN (SELECT user_id FROM blocked_users);",
    "Rewrite this query without the subquery in the SELECT list, and explain why the "
    "rewrite can be faster:\n"
    "SELECT c.name,\n"
    "  (SELECT COUNT(*) FROM orders o WHERE o.customer_id = c.id) AS order_count\n"
    "FROM customers c;",
    "Convert this SQL Server query to MySQL:\n"
    "SELECT TOP 3 name, ISNULL(phone, 'n/a') AS phone, GETDATE() AS fetched_at\n"
    "FROM contacts ORDER BY name;",
    "Translate this Oracle query to PostgreSQL:\n"
    "SELECT employee_id, NVL(commission, 0), TO_CHAR(hire_date, 'YYYY')\n"
    "FROM staff WHERE ROWNUM <= 10;",
]


def _fill(template: str, schema: dict, rng: random.Random) -> str:
    cv, cv2, cv3 = rng.sample(schema["cats"], 3)
    values = dict(schema)
    values.update(
        cv=cv, cv2=cv2, cv3=cv3,
        year=rng.choice([2022, 2023, 2024]),
        n=rng.choice([3, 5, 10, 20]),
        k=rng.choice([3, 5, 10]),
        Parents=schema["parents"][0].upper() + schema["parents"][1:],
    )
    return template.format(**values)


def _original() -> list[tuple[str, str]]:
    """The first 365 prompts, unchanged: the original templates on the original schemas, concepts and snippets."""
    rng = random.Random(20240611)
    out: list[tuple[str, str]] = []
    for section, templates in _TEMPLATES.items():
        for i, template in enumerate(templates, start=1):
            pool = _SCHEMAS
            if template.startswith("+"):
                template = template[1:]
                pool = [s for s in _SCHEMAS if s.get("additive", True)]
            for schema in rng.sample(pool, 7):
                out.append((f"{section}-template-{i}", _fill(template, schema, rng)))
    out.extend((f"concept-{i}", text) for i, text in enumerate(_CONCEPTS, start=1))
    out.extend((f"snippet-{i}", text) for i, text in enumerate(_SNIPPETS, start=1))
    rng.shuffle(out)
    result: list[tuple[str, str]] = []
    seen: set[str] = set()
    for group, text in out:
        text = text.strip()
        if text and text not in seen:
            seen.add(text)
            result.append((group, text))
    assert len(result) >= 340, len(result)
    return result


# ---------------------------------------------------------------------------
# Extension: more schemas across business domains, more request templates (CTEs, window functions, upserts,
# indexes, EXPLAIN, dialect conversion, debugging a given wrong query ...), multi-table schemas with their own
# questions, and more standalone concepts and snippets. Appended after the original prompts.
# ---------------------------------------------------------------------------
_MORE_SCHEMAS = [
    dict(t="print_jobs", ddl="print_jobs(id, printer_id, pages, cost_cents, paper_size, submitted_at)",
         p="printers", pddl="printers(id, location, model, installed_on)",
         fk="printer_id", item="print job", items="print jobs", parent="printer", parents="printers",
         pname="model", pgroup="location", num="pages", num_label="pages printed",
         date="submitted_at", cat="paper_size", cats=("A4", "A3", "letter")),
    dict(t="admissions", ddl="admissions(id, patient_id, ward, length_of_stay_days, admission_type, admitted_at)",
         p="patients", pddl="patients(id, name, birth_year, insurance_plan)",
         fk="patient_id", item="hospital admission", items="hospital admissions", parent="patient",
         parents="patients", pname="name", pgroup="insurance_plan", num="length_of_stay_days",
         num_label="days in hospital", date="admitted_at", cat="admission_type",
         cats=("emergency", "elective", "transfer")),
    dict(t="claims", ddl="claims(id, policy_id, claim_amount, claim_type, status, filed_at)",
         p="policies", pddl="policies(id, holder_name, product, annual_premium, start_date)",
         fk="policy_id", item="insurance claim", items="insurance claims", parent="policy", parents="policies",
         pname="holder_name", pgroup="product", num="claim_amount", num_label="claimed amount",
         date="filed_at", cat="claim_type", cats=("theft", "water_damage", "collision")),
    dict(t="invoices", ddl="invoices(id, subscription_id, amount_due, currency, payment_status, issued_at)",
         p="subscriptions", pddl="subscriptions(id, company_name, plan_tier, seats, started_on)",
         fk="subscription_id", item="invoice", items="invoices", parent="subscription", parents="subscriptions",
         pname="company_name", pgroup="plan_tier", num="amount_due", num_label="billed amount",
         date="issued_at", cat="payment_status", cats=("paid", "overdue", "refunded")),
    dict(t="payslips", ddl="payslips(id, staff_id, gross_pay, tax_withheld, pay_type, pay_date)",
         p="staff", pddl="staff(id, name, cost_center, contract_type, start_date)",
         fk="staff_id", item="payslip", items="payslips", parent="staff member", parents="staff members",
         pname="name", pgroup="cost_center", num="gross_pay", num_label="gross pay",
         date="pay_date", cat="pay_type", cats=("monthly", "bonus", "overtime")),
    dict(t="leave_requests", ddl="leave_requests(id, employee_id, leave_kind, days_requested, approval_state, requested_on)",
         p="employees", pddl="employees(id, name, team, manager_id, hired_on)",
         fk="employee_id", item="leave request", items="leave requests", parent="employee", parents="employees",
         pname="name", pgroup="team", num="days_requested", num_label="days of leave",
         date="requested_on", cat="leave_kind", cats=("vacation", "sick", "parental")),
    dict(t="enrollments", additive=False, ddl="enrollments(id, course_id, learner_id, final_grade, mode, enrolled_at)",
         p="courses", pddl="courses(id, title, faculty, credits, level)",
         fk="course_id", item="enrollment", items="enrollments", parent="course", parents="courses",
         pname="title", pgroup="faculty", num="final_grade", num_label="final grade",
         date="enrolled_at", cat="mode", cats=("online", "in_person", "hybrid")),
    dict(t="sales_calls", ddl="sales_calls(id, rep_id, lead_company, call_minutes, outcome, called_at)",
         p="sales_reps", pddl="sales_reps(id, name, territory, quota)",
         fk="rep_id", item="sales call", items="sales calls", parent="sales rep", parents="sales reps",
         pname="name", pgroup="territory", num="call_minutes", num_label="minutes on the phone",
         date="called_at", cat="outcome", cats=("meeting_booked", "no_answer", "not_interested")),
    dict(t="ad_clicks", ddl="ad_clicks(id, campaign_id, cost_cents, device_type, country_code, clicked_at)",
         p="campaigns", pddl="campaigns(id, campaign_name, channel, daily_budget, launched_on)",
         fk="campaign_id", item="ad click", items="ad clicks", parent="campaign", parents="campaigns",
         pname="campaign_name", pgroup="channel", num="cost_cents", num_label="click cost",
         date="clicked_at", cat="device_type", cats=("mobile", "tablet", "desktop")),
    dict(t="meter_readings", additive=False, ddl="meter_readings(id, meter_id, kwh_total, reading_source, read_at)",
         p="meters", pddl="meters(id, serial_no, household_id, tariff, installed_on)",
         fk="meter_id", item="meter reading", items="meter readings", parent="electricity meter",
         parents="electricity meters", pname="serial_no", pgroup="tariff", num="kwh_total",
         num_label="cumulative kWh", date="read_at", cat="reading_source", cats=("smart", "manual", "estimated")),
    dict(t="parking_sessions", ddl="parking_sessions(id, garage_id, plate, minutes_parked, amount_paid, payment_method, entered_at)",
         p="garages", pddl="garages(id, name, district, spaces)",
         fk="garage_id", item="parking session", items="parking sessions", parent="garage", parents="garages",
         pname="name", pgroup="district", num="amount_paid", num_label="parking revenue",
         date="entered_at", cat="payment_method", cats=("app", "card", "coins")),
    dict(t="reservations", ddl="reservations(id, restaurant_id, party_size, deposit, source, reserved_for)",
         p="restaurants", pddl="restaurants(id, name, cuisine, neighborhood, seats)",
         fk="restaurant_id", item="reservation", items="reservations", parent="restaurant", parents="restaurants",
         pname="name", pgroup="cuisine", num="party_size", num_label="guests booked",
         date="reserved_for", cat="source", cats=("phone", "website", "walk_in")),
    dict(t="app_sessions", ddl="app_sessions(id, account_id, platform, session_seconds, app_version, started_at)",
         p="accounts", pddl="accounts(id, username, signup_country, tier, created_at)",
         fk="account_id", item="app session", items="app sessions", parent="account", parents="accounts",
         pname="username", pgroup="signup_country", num="session_seconds", num_label="time in the app",
         date="started_at", cat="platform", cats=("ios", "android", "web")),
    dict(t="rentals", ddl="rentals(id, bike_id, rider_id, ride_minutes, price, end_station, rented_at)",
         p="bikes", pddl="bikes(id, model, home_station, commissioned_on)",
         fk="bike_id", item="bike rental", items="bike rentals", parent="bike", parents="bikes",
         pname="model", pgroup="home_station", num="ride_minutes", num_label="minutes ridden",
         date="rented_at", cat="end_station", cats=("Central", "Harbor", "University")),
    dict(t="water_tests", additive=False, ddl="water_tests(id, well_id, nitrate_mg_l, lab, result, sampled_on)",
         p="wells", pddl="wells(id, owner_name, county, depth_m)",
         fk="well_id", item="water test", items="water tests", parent="well", parents="wells",
         pname="owner_name", pgroup="county", num="nitrate_mg_l", num_label="nitrate level",
         date="sampled_on", cat="result", cats=("pass", "retest", "fail")),
    dict(t="donations", ddl="donations(id, donor_id, amount, fund, channel, donated_at)",
         p="donors", pddl="donors(id, donor_name, region, first_gift_on)",
         fk="donor_id", item="donation", items="donations", parent="donor", parents="donors",
         pname="donor_name", pgroup="region", num="amount", num_label="amount donated",
         date="donated_at", cat="fund", cats=("general", "scholarships", "disaster_relief")),
    dict(t="issues", additive=False, ddl="issues(id, project_id, severity, story_points, state, created_at, closed_at)",
         p="projects", pddl="projects(id, key, owner_team, repo_url)",
         fk="project_id", item="issue", items="issues", parent="project", parents="projects",
         pname="key", pgroup="owner_team", num="story_points", num_label="story points",
         date="created_at", cat="severity", cats=("minor", "major", "blocker")),
    dict(t="matches", additive=False, ddl="matches(id, player_id, game_mode, score, kills, result, played_at)",
         p="players", pddl="players(id, gamertag, region, level, registered_at)",
         fk="player_id", item="match", items="matches", parent="player", parents="players",
         pname="gamertag", pgroup="region", num="score", num_label="match score",
         date="played_at", cat="game_mode", cats=("ranked", "casual", "tournament")),
    dict(t="downloads", ddl="downloads(id, episode_id, listener_country, bytes_sent, client_app, downloaded_at)",
         p="episodes", pddl="episodes(id, title, show_name, duration_min, released_on)",
         fk="episode_id", item="episode download", items="episode downloads", parent="episode", parents="episodes",
         pname="title", pgroup="show_name", num="bytes_sent", num_label="bytes served",
         date="downloaded_at", cat="client_app", cats=("spotify", "apple_podcasts", "browser")),
    dict(t="solar_output", ddl="solar_output(id, array_id, kwh_generated, weather, measured_on)",
         p="panel_arrays", pddl="panel_arrays(id, site_name, owner, capacity_kw, installed_on)",
         fk="array_id", item="daily output record", items="daily output records", parent="panel array",
         parents="panel arrays", pname="site_name", pgroup="owner", num="kwh_generated",
         num_label="energy generated", date="measured_on", cat="weather", cats=("sunny", "cloudy", "rain")),
    dict(t="bookings", ddl="bookings(id, room_id, guest_email, nights, total_price, channel, check_in)",
         p="rooms", pddl="rooms(id, room_number, room_type, floor, nightly_rate)",
         fk="room_id", item="booking", items="bookings", parent="room", parents="rooms",
         pname="room_number", pgroup="room_type", num="total_price", num_label="booking revenue",
         date="check_in", cat="channel", cats=("direct", "travel_agent", "online_portal")),
    dict(t="prescriptions", ddl="prescriptions(id, prescriber_id, drug_name, quantity, copay, form, filled_at)",
         p="prescribers", pddl="prescribers(id, name, specialty, clinic)",
         fk="prescriber_id", item="prescription", items="prescriptions", parent="prescriber",
         parents="prescribers", pname="name", pgroup="specialty", num="quantity", num_label="units dispensed",
         date="filled_at", cat="form", cats=("tablet", "syrup", "injection")),
    dict(t="attendance", ddl="attendance(id, pupil_id, class_date, minutes_late, status)",
         p="pupils", pddl="pupils(id, name, homeroom, year_group)",
         fk="pupil_id", item="attendance record", items="attendance records", parent="pupil", parents="pupils",
         pname="name", pgroup="homeroom", num="minutes_late", num_label="minutes late",
         date="class_date", cat="status", cats=("present", "absent", "excused")),
    dict(t="harvests", ddl="harvests(id, field_id, crop, yield_tonnes, moisture_pct, harvested_on)",
         p="fields", pddl="fields(id, field_name, farm, hectares, soil_type)",
         fk="field_id", item="harvest", items="harvests", parent="field", parents="fields",
         pname="field_name", pgroup="farm", num="yield_tonnes", num_label="harvested tonnes",
         date="harvested_on", cat="crop", cats=("wheat", "barley", "canola")),
    dict(t="charging_sessions", ddl="charging_sessions(id, charger_id, energy_kwh, fee, connector, plugged_in_at)",
         p="chargers", pddl="chargers(id, site_name, operator, max_kw)",
         fk="charger_id", item="charging session", items="charging sessions", parent="charger", parents="chargers",
         pname="site_name", pgroup="operator", num="energy_kwh", num_label="energy delivered",
         date="plugged_in_at", cat="connector", cats=("ccs", "chademo", "type2")),
    dict(t="applications", additive=False, ddl="applications(id, job_id, candidate_email, years_experience, stage, applied_at)",
         p="jobs", pddl="jobs(id, title, department, salary_band, posted_on)",
         fk="job_id", item="job application", items="job applications", parent="job opening",
         parents="job openings", pname="title", pgroup="department", num="years_experience",
         num_label="years of experience", date="applied_at", cat="stage",
         cats=("screening", "interview", "offer")),
    dict(t="bids", additive=False, ddl="bids(id, auction_id, bidder_id, bid_amount, bid_source, placed_at)",
         p="auctions", pddl="auctions(id, lot_title, seller_id, category, reserve_price, ends_at)",
         fk="auction_id", item="bid", items="bids", parent="auction", parents="auctions",
         pname="lot_title", pgroup="category", num="bid_amount", num_label="bid amount",
         date="placed_at", cat="bid_source", cats=("web", "mobile", "proxy")),
    dict(t="calls", ddl="calls(id, queue_id, caller_number, wait_seconds, handle_seconds, disposition, received_at)",
         p="queues", pddl="queues(id, queue_name, language, site)",
         fk="queue_id", item="call", items="calls", parent="call queue", parents="call queues",
         pname="queue_name", pgroup="language", num="wait_seconds", num_label="waiting time",
         date="received_at", cat="disposition", cats=("resolved", "transferred", "abandoned")),
    dict(t="returns", ddl="returns(id, order_id, refund_amount, reason_code, condition, returned_at)",
         p="orders", pddl="orders(id, customer_email, sales_channel, order_total, ordered_at)",
         fk="order_id", item="product return", items="product returns", parent="order", parents="orders",
         pname="customer_email", pgroup="sales_channel", num="refund_amount", num_label="refunded amount",
         date="returned_at", cat="reason_code", cats=("damaged", "wrong_size", "changed_mind")),
    dict(t="inspections", additive=False, ddl="inspections(id, site_id, inspector, violations, grade, inspected_on)",
         p="sites", pddl="sites(id, business_name, borough, license_type)",
         fk="site_id", item="inspection", items="inspections", parent="inspected business",
         parents="inspected businesses", pname="business_name", pgroup="borough", num="violations",
         num_label="violations found", date="inspected_on", cat="grade", cats=("A", "B", "C")),
    dict(t="museum_visits", ddl="museum_visits(id, exhibit_id, visitor_type, group_size, ticket_price, entered_at)",
         p="exhibits", pddl="exhibits(id, exhibit_name, gallery, curator, opened_on)",
         fk="exhibit_id", item="museum visit", items="museum visits", parent="exhibit", parents="exhibits",
         pname="exhibit_name", pgroup="gallery", num="ticket_price", num_label="ticket income",
         date="entered_at", cat="visitor_type", cats=("adult", "student", "member")),
    dict(t="stock_trades", ddl="stock_trades(id, portfolio_id, ticker, shares, trade_value, side, executed_at)",
         p="portfolios", pddl="portfolios(id, owner, strategy, opened_on)",
         fk="portfolio_id", item="trade", items="trades", parent="portfolio", parents="portfolios",
         pname="owner", pgroup="strategy", num="trade_value", num_label="traded value",
         date="executed_at", cat="side", cats=("buy", "sell", "short")),
]

# More request templates, with the placeholders of `_TEMPLATES` plus: days (a window in days), CV (cv upper-cased).
# A leading "=" marks a template whose prompts differ only in names (a query to convert, a plan to read): it is
# filled for a few schemas only, since more would be the same request reworded.
_MORE_TEMPLATES = {
    "cte": [
        "Using {ddl}, write a query with two CTEs: the first counts each {fk}'s {items} in {year}, the second keeps "
        "only those above the average count. Return the {fk} and its count.",
        "=Rewrite this nested query on {t} as a chain of CTEs and explain what each step does:\n"
        "SELECT {cat}, avg_value FROM (\n"
        "  SELECT {cat}, AVG({num}) AS avg_value\n"
        "  FROM (SELECT * FROM {t} WHERE {date} >= '{year}-01-01') recent\n"
        "  GROUP BY {cat}\n"
        ") per_kind WHERE avg_value > (SELECT AVG({num}) FROM {t});",
        "+With CTEs over {ddl} and {pddl}, find for each {pgroup} the single {parent} with the largest total "
        "{num_label} in {year}.",
        "=Write a recursive CTE that produces one row per week from {year}-01-01 to {year}-03-31, then left-join it "
        "to {ddl} to count the {items} in each week, including weeks with none.",
        "Using {ddl}, find the {fk} values with {items} on at least {n} consecutive days (a gaps-and-islands "
        "problem). Explain the ROW_NUMBER trick that the query relies on.",
    ],
    "window-more": [
        "For every {item} in {ddl}, show its {num} and the percentage it makes up of its {fk}'s total, using a "
        "window SUM instead of a join.",
        "Using {ddl}, return the first and the last {item} of each {fk} by {date} in one query with FIRST_VALUE "
        "and LAST_VALUE. Why does LAST_VALUE need an explicit window frame?",
        "For each {item} in {ddl}, compute how many days have passed since the same {fk}'s previous {item}; the "
        "first one per {fk} should show NULL.",
        "Using {ddl}, return the top {k} {items} by {num} within each {cat}, keeping ties. Is RANK or DENSE_RANK "
        "the right choice here?",
        "Compute the cumulative distribution of {num} over {ddl} with PERCENT_RANK and CUME_DIST, and explain how "
        "the two functions differ on tied values.",
        "+For each month of {year}, show the total {num_label} from {ddl} and the percentage change from the "
        "previous month.",
        "Write a query on {ddl} that flags each {item} whose {num} is more than twice the average of the same "
        "{fk}'s previous 5 {items}.",
    ],
    "upsert": [
        "Write a PostgreSQL upsert for {ddl}: insert a row, or, when a row with the same id already exists, "
        "update its {num} and {cat}. Use ON CONFLICT and explain EXCLUDED.",
        "Show how the same insert-or-update on {ddl} is written in MySQL with ON DUPLICATE KEY UPDATE and in "
        "SQLite with ON CONFLICT, and point out the differences.",
        "A nightly job loads new {items} into a staging table shaped like {ddl}. Write a MERGE statement that "
        "updates the matching rows of {t} and inserts the rest.",
        "=The pair ({fk}, {date}) must be unique in {ddl} so that re-running an import cannot create duplicate "
        "{items}. Add the constraint, and write an INSERT that skips rows that would violate it.",
    ],
    "index-more": [
        "Most queries on {ddl} filter on {cat} = '{cv}' and sort by {date} DESC. Propose an index, write the "
        "CREATE INDEX statement, and justify the column order.",
        "Does {fk} in {ddl} need an index when rows of {p} are deleted often? Explain what a delete from {p} has "
        "to do without one.",
        "=+Here is a frequent query on {ddl}:\n"
        "SELECT {fk}, SUM({num}) FROM {t} WHERE {date} >= '{year}-06-01' GROUP BY {fk};\n"
        "Which index would let PostgreSQL answer it with an index-only scan, and what does the visibility map have "
        "to do with it?",
        "Only about 2% of the rows in {ddl} have {cat} = '{cv}', and most lookups want exactly those rows. Write a "
        "partial index for them and a query that can use it.",
        "=A teammate created separate single-column indexes on {fk}, {cat} and {date} of {t}. When would one "
        "composite index serve our queries better, and when are the separate indexes fine?",
    ],
    "explain-plan": [
        "=EXPLAIN ANALYZE for a query on {t} shows 'Seq Scan on {t} (actual rows=20000) Filter: ({cat} = "
        "'{cv}') Rows Removed by Filter: 2380000'. What does that tell me, and what would I try first?",
        "The plan for a join of {ddl} with {pddl} shows a Nested Loop whose inner index scan on {p} runs with "
        "loops=85000. Is that necessarily bad, and when would a hash join be the better plan?",
        "=Why could EXPLAIN estimate 12 rows for WHERE {fk} = 7 AND {cat} = '{cv}' on {t} when the query returns "
        "9,000? How would CREATE STATISTICS help with correlated columns?",
        "=How do I read 'cost=0.43..8.45 rows=1 width=48' on an index scan of {t} in PostgreSQL's EXPLAIN output? "
        "What do the two costs and the width mean?",
    ],
    "debug": [
        "+This should list each {parent} once with their total {num}, but {parents} show up several times. What "
        "is wrong?\n"
        "SELECT p.{pname}, c.{cat}, SUM(c.{num})\n"
        "FROM {p} p JOIN {t} c ON c.{fk} = p.id\n"
        "GROUP BY p.{pname}, c.{cat};",
        "=I want the {items} from the last {days} days in {t}, but this fails in PostgreSQL:\n"
        "SELECT * FROM {t} WHERE {date} > CURRENT_DATE - '{days}';\n"
        "What is wrong, and what is the right interval expression?",
        "This update was only meant to touch rows of {t} with {cat} = '{cv}', but it changed every row. Why?\n"
        "UPDATE {t} SET {cat} = '{cv2}';\n"
        "WHERE {cat} = '{cv}';",
        "=This should return the {parents} with more than {n} {items}, but it returns every {parent} or none:\n"
        "SELECT p.{pname} FROM {p} p JOIN {t} c ON c.{fk} = p.id\n"
        "WHERE (SELECT COUNT(*) FROM {t}) > {n}\n"
        "GROUP BY p.{pname};\n"
        "Find the bug and correct the query.",
        "AVG({num}) on {ddl} gives a different result from SUM({num}) / COUNT(*). Which rows cause the "
        "difference, and which figure is the right 'average {num_label}'?",
        "=My query ending in ORDER BY {num} DESC LIMIT {k} on {t} returns different rows on different runs when "
        "there are ties. Why does that happen, and how do I make it deterministic?",
        "=This query for the {items} of {year} misses everything on December 31 because {date} has a time part:\n"
        "SELECT * FROM {t} WHERE {date} BETWEEN '{year}-01-01' AND '{year}-12-31';\n"
        "Explain why and rewrite the filter.",
        "=PostgreSQL says 'more than one row returned by a subquery used as an expression' for this query:\n"
        "SELECT p.{pname}, (SELECT c.{num} FROM {t} c WHERE c.{fk} = p.id) FROM {p} p;\n"
        "What does the error mean, and what are two ways to fix it?",
        "Why does COUNT({cat}) return fewer rows than COUNT(*) on {ddl}? Which one should I use to count "
        "{items}, and when is the other one useful?",
    ],
    "convert": [
        "Translate this PostgreSQL query into SQLite, which has neither ILIKE nor DATE_TRUNC:\n"
        "SELECT {fk}, COUNT(*) FROM {t}\n"
        "WHERE {cat} ILIKE '%{cv}%' AND {date} >= DATE_TRUNC('month', NOW())\n"
        "GROUP BY {fk};",
        "=+Rewrite this T-SQL for PostgreSQL:\n"
        "SELECT TOP {k} {fk}, DATEPART(month, {date}) AS m, SUM({num}) AS total\n"
        "FROM {t} WITH (NOLOCK)\n"
        "GROUP BY {fk}, DATEPART(month, {date})\n"
        "ORDER BY total DESC;",
        "=Convert this PostgreSQL query to BigQuery Standard SQL:\n"
        "SELECT {cat}, PERCENTILE_CONT(0.5) WITHIN GROUP (ORDER BY {num}) AS median_value\n"
        "FROM {t}\n"
        "GROUP BY {cat};",
        "=How would this MySQL query be written in Snowflake?\n"
        "SELECT {fk}, GROUP_CONCAT(DISTINCT {cat} ORDER BY {cat} SEPARATOR ', ') AS kinds\n"
        "FROM {t}\n"
        "GROUP BY {fk};",
        "=This Oracle query has to run on SQL Server. Rewrite it:\n"
        "SELECT {fk}, NVL({num}, 0), TRUNC({date})\n"
        "FROM {t}\n"
        "WHERE {date} > SYSDATE - {days}\n"
        "FETCH FIRST {k} ROWS ONLY;",
    ],
    "question": [
        "Which {pgroup} had the most {items} in {year}? The tables are {pddl} and {ddl}. Return only the top "
        "{pgroup} and its count.",
        "+I build the dashboard for a team that keeps its {items} in {ddl}. Write the query for a tile that shows "
        "this month's total {num_label} next to the same month last year.",
        "List the {parents} in {pddl} whose first {item} in {ddl} happened in {year}, with the date of that "
        "first {item}.",
        "Using {ddl}, find the {fk} values that have at least one {item} with {cat} '{cv}' but never one with "
        "{cat} '{cv2}'.",
        "Write a query on {ddl} that returns the average number of {items} per day for each day of the week, "
        "starting with Monday.",
        "From {ddl}, which hour of the day has the highest average {num}? Show all 24 hours, ordered by that "
        "average.",
        "Using {pddl} and {ddl}, show each {parent}'s {pname} with the {date} and {num} of their latest {item}, "
        "keeping {parents} who have none (with NULLs).",
        "+Pivot {ddl} into one row per {fk} with one column per quarter of {year}, each holding the total {num}.",
        "Using {ddl}: of the {fk} values with at least one {item} in January {year}, what share also had one in "
        "February {year}? Return the share as a percentage.",
        "=Find pairs of {items} in {ddl} with the same {fk} that happened less than an hour apart. Use a self-join "
        "and make sure each pair is listed only once.",
        "Using {ddl}, list the {cat} values ordered by how many distinct {fk} values they occur with, and show "
        "that number.",
        "Write a query on {ddl} that groups {num} into buckets of width 10 (0-9, 10-19, and so on) and counts "
        "the {items} in each bucket.",
        "Using {ddl}, find the longest gap in days between consecutive {items} for each {fk}.",
        "With {pddl} and {ddl}, list the {parents} whose average {num} is above the average of their own "
        "{pgroup}.",
    ],
    "schema-design": [
        "Design a history table that records every change to the {cat} of a row in {ddl}, and write a PostgreSQL "
        "trigger that fills it.",
        "Add a CHECK constraint to {ddl} so that {num} can never be negative, and show what happens to an INSERT "
        "that breaks it.",
        "Write a migration that moves {cat} out of {ddl} into its own lookup table referenced by a foreign key, "
        "without losing any data.",
        "Which data types and constraints would you choose for each column of {ddl} in MySQL 8? Justify the less "
        "obvious choices.",
        "{t} ({ddl}) has grown to 800 million rows. Show how to range-partition it by {date} in PostgreSQL with "
        "one partition per month.",
        "Write the SQL for a read-only role that lets analysts SELECT from {t} and {p} but not change them. "
        "Tables: {ddl} and {pddl}.",
        "Create a materialized view over {ddl} holding the daily totals per {cat}, plus the unique index it "
        "needs to be refreshed CONCURRENTLY.",
    ],
    "transactions": [
        "=Two sessions change the same row of {t} at once: one sets {cat} to '{cv}', the other adds 10 to {num}. "
        "What can go wrong under READ COMMITTED, and how does SELECT ... FOR UPDATE help? Schema: {ddl}.",
        "Write a transaction that reassigns one {item} in {ddl} from one {fk} to another and writes an audit row, "
        "so that either both changes happen or neither does.",
        "=A cleanup job runs DELETE FROM {t} WHERE {date} < '{year}-01-01' and blocks other work for minutes. How "
        "can it delete in small batches instead? Show the SQL.",
    ],
    "data-quality": [
        "=Write checks for {ddl} that find rows with a NULL {fk}, a negative {num}, or a {date} in the future, "
        "returning one row per kind of problem with its count.",
        "Find the {items} in {ddl} whose {fk} has no matching row in {pddl}, and explain how a foreign key would "
        "have prevented these orphans.",
        "The {cat} column of {ddl} holds variants such as '{cv}', ' {cv}' and '{CV}'. Write a query that lists "
        "the variants with their counts, and an UPDATE that normalises them.",
        "How can I find near-duplicate rows in {ddl}: same {fk} and {cat}, with {date} values less than a minute "
        "apart?",
    ],
}

# Multi-table schemas, each with its own business questions: (name, tables, questions).
_STARS = [
    ("shop", "customers(id, name, city), orders(id, customer_id, ordered_at, status), "
     "order_items(order_id, product_id, quantity, unit_price), products(id, name, category)", [
        "Which five products brought in the most revenue last quarter?",
        "For each city, what is the average number of items per order?",
        "Which customers bought something from every category?",
        "Find customers whose most recent order was cancelled.",
        "Show monthly revenue per category for the current year, one column per category.",
        "Which pairs of products are most often bought in the same order?",
    ]),
    ("school", "students(id, name, enrolled_year), courses(id, code, title, teacher_id), "
     "teachers(id, name, department), grades(student_id, course_id, term, grade)", [
        "Which teacher's courses have the highest average grade?",
        "List students who failed (grade below 50) in more than one course in the same term.",
        "For each department, how many distinct students did its teachers teach this year?",
        "Find courses where the average grade dropped by more than 10 points from one term to the next.",
        "Which students improved their average grade in every term?",
        "Show each student's best and worst course by grade.",
    ]),
    ("airline", "airports(code, city, country), flights(id, origin, destination, scheduled_departure, "
     "aircraft_id), aircraft(id, model, seats), bookings(id, flight_id, passenger_id, fare, cabin)", [
        "What is the load factor (booked seats / seats) of each flight last week?",
        "Which routes (origin-destination pairs) earned the most fare revenue this year?",
        "List passengers who flew out of three or more different countries.",
        "For each aircraft model, what share of bookings is in business cabin?",
        "Find flights that were overbooked.",
        "Which airport has the most departures on weekends compared with weekdays?",
    ]),
    ("clinic", "patients(id, name, birth_date), doctors(id, name, specialty), "
     "visits(id, patient_id, doctor_id, visit_date, diagnosis_code), "
     "prescriptions(id, visit_id, drug, days_supply)", [
        "Which doctors saw the most distinct patients last month?",
        "Find patients who visited more than one specialty within 30 days.",
        "What are the three most prescribed drugs for each specialty?",
        "List visits that did not result in any prescription.",
        "For each patient, how many days passed between their first and latest visit?",
        "Which diagnosis codes are most common among patients over 65?",
    ]),
    ("streaming", "users(id, country, plan), titles(id, name, kind, release_year), "
     "views(user_id, title_id, started_at, minutes_watched), ratings(user_id, title_id, stars)", [
        "Which titles have the highest completion rate, counting a view of 90 minutes or more as complete?",
        "For each plan, what is the median weekly watch time per user?",
        "Find users who rated a title they never watched.",
        "Which countries watch the most series compared with films?",
        "List titles whose average rating is high but that fewer than 50 users have watched.",
        "Show, for each user, the first title they watched after signing up.",
    ]),
    ("warehouse", "warehouses(id, city), items(id, sku, name, unit_cost), "
     "stock(warehouse_id, item_id, quantity), movements(id, item_id, from_warehouse, to_warehouse, qty, moved_at)", [
        "What is the total stock value per warehouse?",
        "Which items are out of stock in some warehouse but overstocked (more than 500 units) in another?",
        "Reconstruct the stock of one item in one warehouse on a given date from the movements table.",
        "Which warehouse pairs exchange the most units?",
        "List items that have not moved at all in the last 90 days.",
        "Find movements whose quantity is larger than the stock the source warehouse holds now.",
    ]),
    ("forum", "users(id, handle, joined_at), threads(id, author_id, board, created_at), "
     "posts(id, thread_id, author_id, created_at, body), reactions(post_id, user_id, kind)", [
        "Which boards have the most active threads (a post in the last 7 days)?",
        "Who are the ten users whose posts received the most reactions per post, counting only users with 20 posts or more?",
        "Find threads where the author never replied.",
        "What is the median time to the first reply, per board?",
        "List users who reacted to their own posts.",
        "Which threads went quiet for a month and then got new posts?",
    ]),
    ("hr", "employees(id, name, manager_id, department_id, hired_on), departments(id, name), "
     "salaries(employee_id, amount, valid_from, valid_to), reviews(employee_id, year, rating)", [
        "Show every employee with their current salary.",
        "List each manager with the size of their whole reporting tree, not just direct reports.",
        "Which employees earn more than their manager?",
        "What was the average salary raise per department last year?",
        "Find employees rated 5 in two consecutive years who did not get a raise in between.",
        "Which department has the highest turnover of people hired in the last two years?",
    ]),
    ("marketplace", "sellers(id, shop_name, country), listings(id, seller_id, title, price, listed_at), "
     "sales(id, listing_id, buyer_id, sold_at, amount), disputes(sale_id, opened_at, outcome)", [
        "Which sellers have a dispute rate above 5% of their sales?",
        "How long do listings take to sell, on average, per seller country?",
        "Find listings that sold for less than their list price.",
        "Which buyers bought from more than ten different sellers?",
        "List sellers whose sales fell three months in a row.",
        "What share of disputes end in the buyer's favor, per month?",
    ]),
    ("events", "venues(id, name, city, capacity), events(id, venue_id, title, starts_at), "
     "tickets(id, event_id, tier, price), purchases(ticket_id, customer_id, purchased_at, refunded)", [
        "Which events sold out, counting refunded tickets as unsold?",
        "How many days before the event are tickets bought, on average, per tier?",
        "Which venues are most often filled above 90% of capacity?",
        "Find customers who bought tickets to events on the same evening in different cities.",
        "What is the net revenue per event after refunds?",
        "List customers whose refunds exceed half of their purchases.",
    ]),
    ("logistics", "depots(id, city), drivers(id, name, depot_id), routes(id, driver_id, route_date, planned_stops), "
     "deliveries(id, route_id, delivered_at, status, parcel_weight_kg)", [
        "Which drivers complete the highest share of their planned stops?",
        "What is the total parcel weight delivered per depot per week?",
        "Find routes where every delivery failed.",
        "Which depot's drivers have the latest average finish time?",
        "List drivers who worked more than six days in a row.",
        "Show the daily failed-delivery rate with a 7-day moving average.",
    ]),
    ("banking", "clients(id, name, segment), accounts(id, client_id, kind, opened_on), "
     "transactions(id, account_id, amount, booked_at, counterparty), cards(id, account_id, status, expires_on)", [
        "What is each client's total balance across all their accounts, from the transactions?",
        "Find accounts with no transactions in the last 180 days that still have an active card.",
        "Which counterparties receive money from the most different clients?",
        "Flag transactions larger than three times the account's average transaction amount.",
        "How many clients per segment have both a checking and a savings account?",
        "List cards expiring next month on accounts that had transactions this month.",
    ]),
    ("projects", "projects(id, name, client, budget), tasks(id, project_id, assignee_id, estimate_hours, "
     "status), timesheets(task_id, person_id, work_date, hours), people(id, name, hourly_rate)", [
        "Which projects have spent more than their budget, using logged hours times hourly rates?",
        "Find tasks where the logged hours exceed the estimate by more than 50%.",
        "Who logged hours on tasks that were not assigned to them?",
        "What is each person's utilization: logged hours divided by 40 per week, for the last month?",
        "List projects with open tasks but no hours logged in the last two weeks.",
        "For each client, compare estimated and logged hours across all their projects.",
    ]),
    ("fitness", "members(id, name, joined_on, plan), classes(id, name, instructor, capacity), "
     "sessions(id, class_id, starts_at), bookings(session_id, member_id, attended)", [
        "What is the no-show rate per class?",
        "Which instructors have the fullest sessions on average?",
        "Find members who booked at least one session every week this month.",
        "List members who joined in the last 90 days and never attended a class.",
        "Which time slots (weekday and hour) are most popular?",
        "Show members whose attendance dropped by half compared with the previous month.",
    ]),
]

_STAR_FORMS = [
    "Schema: {tables}.\nWrite a SQL query that answers this: {q}",
    "Using these tables: {tables}\n{q} Write the query and explain the joins briefly.",
    "Given the tables {tables}, answer with one PostgreSQL query: {q}",
]

_MORE_CONCEPTS = [
    "What is the difference between optimistic and pessimistic locking? Show how each looks in SQL.",
    "What does VACUUM do in PostgreSQL, and why can skipping it make tables grow?",
    "Explain what a write-ahead log is and why databases use one.",
    "What is the difference between a B-tree index and a hash index, and when is each one usable?",
    "What is a GIN index in PostgreSQL good for? Give an example with a JSONB column.",
    "How do I query a value inside a JSONB column in PostgreSQL, and how do I index that lookup?",
    "What is the difference between the -> and ->> operators on JSON in PostgreSQL?",
    "Explain what phantom reads are and which isolation level prevents them.",
    "What does SERIALIZABLE isolation guarantee, and why can transactions fail under it and need a retry?",
    "How do sequences work in PostgreSQL, and why can an identity column have gaps?",
    "What is the difference between SERIAL and GENERATED ALWAYS AS IDENTITY in PostgreSQL?",
    "What is a surrogate key, and how does it differ from a natural key? When would you pick each?",
    "Explain what denormalization is and when it is a reasonable trade-off.",
    "What are slowly changing dimensions? Describe type 1 and type 2 with a customer address example.",
    "What is a fact table and what is a dimension table in a data warehouse?",
    "Explain what a self-join is and give a use case with an employees table.",
    "What does NULLIF do? Show how it prevents a division-by-zero error.",
    "What is the difference between COUNT(*), COUNT(1) and COUNT(column)?",
    "What are GROUPING SETS and CUBE in SQL? How do they relate to ROLLUP?",
    "What does the FILTER clause on an aggregate do in PostgreSQL? Rewrite it with CASE for other databases.",
    "Explain the difference between RANGE and ROWS in a window frame.",
    "What is the default window frame when a window has an ORDER BY, and why does it surprise people?",
    "What does a semi-join mean, and which SQL constructs produce one?",
    "What is an anti-join? Show three ways to write one in SQL.",
    "Why is SELECT * discouraged in views and production queries?",
    "What is connection pooling, and why do web applications use something like PgBouncer?",
    "What happens during a database migration that adds a column with a default value on a huge table, and how has PostgreSQL improved this?",
    "How does MVCC let readers and writers avoid blocking each other?",
    "What is a foreign key's ON UPDATE action, and when would you use CASCADE there?",
    "Explain what a stored procedure is and how it differs from a function in PostgreSQL.",
    "What are the pros and cons of putting business logic in triggers?",
    "What is database sharding, and what kinds of queries become hard after sharding?",
    "Explain read replicas and replication lag. What bug can lag cause in an application?",
    "What is the difference between logical and physical backups? Name a tool for each in PostgreSQL.",
    "What is point-in-time recovery, and what does it need to work?",
    "How does a full-text search in PostgreSQL work with tsvector and tsquery? Show a small example.",
    "Why does LIKE 'abc%' use an index but LIKE '%abc' does not? How could a trigram index help?",
    "What is collation, and how can it change the result of ORDER BY on text?",
    "How do time zones affect GROUP BY on a timestamp by day? Show how to group by local day.",
    "What is the difference between DATE, TIME, TIMESTAMP and INTERVAL types?",
    "What are the differences between SQLite and PostgreSQL that matter most for a small web app?",
    "When is SQLite a good production database, and when is it not?",
    "What are window functions, and how are they different from GROUP BY aggregates?",
    "What does it mean for a query to be sargable? Give two non-sargable filters and their fixes.",
    "What is index selectivity, and why does an index on a boolean column rarely help?",
    "Explain what a bitmap heap scan is in a PostgreSQL plan.",
    "What is the difference between a hash join, a merge join and a nested loop join?",
    "Why can an OR in a WHERE clause stop an index from being used, and how can UNION ALL help?",
    "What is a prepared statement, and what are its benefits beyond preventing SQL injection?",
    "How should passwords be stored in a database table? What columns would you use?",
    "What is row-level security in PostgreSQL? Give a multi-tenant example.",
    "What is an EAV (entity-attribute-value) table, and why is it often considered an anti-pattern?",
    "How would you model a many-to-many relationship between students and courses? Write the tables.",
    "How do you model a tree (like categories with subcategories) in SQL? Compare adjacency lists and closure tables.",
    "What is the difference between TRUNCATE ... RESTART IDENTITY and a plain TRUNCATE?",
    "What is a CHECK constraint versus a trigger for validating data? When is each appropriate?",
    "What are generated (computed) columns, and how do you define one in PostgreSQL and MySQL?",
    "How does LIMIT without ORDER BY behave, and why can it return different rows each time?",
    "What is the difference between EXISTS and IN when the subquery returns many rows?",
    "What is a temporary table, and how is it different from a CTE?",
]

_MORE_SNIPPETS = [
    "This query is supposed to return each customer's latest order, but it returns the wrong order id. Why?\n"
    "SELECT customer_id, id, MAX(created_at) FROM orders GROUP BY customer_id;",
    "Explain the result of this query and why it has 12 rows:\n"
    "SELECT s.size, c.color FROM (VALUES ('S'), ('M'), ('L')) s(size)\n"
    "CROSS JOIN (VALUES ('red'), ('blue'), ('green'), ('black')) c(color);",
    "What does this return, and what is the COALESCE for?\n"
    "SELECT d.name, COALESCE(SUM(e.salary), 0) AS payroll\n"
    "FROM departments d LEFT JOIN employees e ON e.department_id = d.id\n"
    "GROUP BY d.name;",
    "Why does this query double count revenue, and how should it be written?\n"
    "SELECT p.category, SUM(oi.quantity * oi.unit_price)\n"
    "FROM products p\n"
    "JOIN order_items oi ON oi.product_id = p.id\n"
    "JOIN product_tags t ON t.product_id = p.id\n"
    "GROUP BY p.category;",
    "Explain what this query computes:\n"
    "SELECT user_id,\n"
    "  COUNT(*) FILTER (WHERE event = 'open') AS opens,\n"
    "  COUNT(*) FILTER (WHERE event = 'click') AS clicks\n"
    "FROM email_events GROUP BY user_id;",
    "This string concatenation returns NULL for some rows. Why?\n"
    "SELECT first_name || ' ' || middle_name || ' ' || last_name AS full_name FROM people;",
    "What does this recursive query produce?\n"
    "WITH RECURSIVE t(n, f) AS (\n"
    "  SELECT 1, 1\n"
    "  UNION ALL\n"
    "  SELECT n + 1, f * (n + 1) FROM t WHERE n < 6\n"
    ")\n"
    "SELECT * FROM t;",
    "Why does this ORDER BY put 10 before 9?\n"
    "SELECT version FROM releases ORDER BY version;\n"
    "-- version is a VARCHAR holding values like '9', '10', '11'",
    "This DELETE removed far more rows than expected. What happened?\n"
    "DELETE FROM order_items WHERE order_id IN (SELECT order_id FROM orders WHERE status = 'test');\n"
    "-- the orders table has columns id, status, created_at",
    "Explain what this query answers:\n"
    "SELECT a.product_id, b.product_id, COUNT(*) AS together\n"
    "FROM order_items a JOIN order_items b\n"
    "  ON a.order_id = b.order_id AND a.product_id < b.product_id\n"
    "GROUP BY a.product_id, b.product_id\n"
    "ORDER BY together DESC LIMIT 10;",
    "Why is the running total wrong when two rows share the same date?\n"
    "SELECT day, amount, SUM(amount) OVER (ORDER BY day) AS running FROM payments;",
    "This MySQL query works, but PostgreSQL rejects it. Why?\n"
    "SELECT department_id, name, MAX(salary) FROM employees GROUP BY department_id;",
    "What is wrong with this attempt to find the second highest salary?\n"
    "SELECT MAX(salary) FROM employees WHERE salary < MAX(salary);",
    "Explain step by step what this returns:\n"
    "SELECT day, temp,\n"
    "  AVG(temp) OVER (ORDER BY day ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) AS smooth\n"
    "FROM weather;",
    "Why does this UPDATE with a join fail in PostgreSQL, and what is the PostgreSQL syntax?\n"
    "UPDATE orders o JOIN customers c ON c.id = o.customer_id\n"
    "SET o.discount = 10 WHERE c.vip = true;",
    "This query returns duplicate customers. Explain why and give two fixes.\n"
    "SELECT c.* FROM customers c JOIN orders o ON o.customer_id = c.id WHERE o.total > 100;",
    "What does this query do, and why might it be slow on a big table?\n"
    "SELECT * FROM logs WHERE DATE(created_at) = '2024-02-10';",
    "This percentage is always 0 in PostgreSQL. Why?\n"
    "SELECT COUNT(*) FILTER (WHERE churned) / COUNT(*) * 100 AS churn_pct FROM subscribers;",
    "What does this MERGE do? Walk through the three branches.\n"
    "MERGE INTO inventory i\n"
    "USING deliveries d ON d.sku = i.sku\n"
    "WHEN MATCHED AND d.qty = 0 THEN DELETE\n"
    "WHEN MATCHED THEN UPDATE SET qty = i.qty + d.qty\n"
    "WHEN NOT MATCHED THEN INSERT (sku, qty) VALUES (d.sku, d.qty);",
    "Why does this CASE never return 'large'?\n"
    "SELECT CASE WHEN size > 10 THEN 'medium' WHEN size > 100 THEN 'large' ELSE 'small' END FROM boxes;",
    "My query with HAVING returns an error in SQL Server but not in MySQL. What is the portable version?\n"
    "SELECT city, COUNT(*) AS n FROM stores GROUP BY city HAVING n > 3;",
    "Explain this query and what the LATERAL join adds:\n"
    "SELECT c.name, o.*\n"
    "FROM customers c\n"
    "CROSS JOIN LATERAL (\n"
    "  SELECT id, total FROM orders WHERE customer_id = c.id ORDER BY total DESC LIMIT 2\n"
    ") o;",
    "Why does adding this index not speed up the query?\n"
    "CREATE INDEX ON users (lower(email));\n"
    "SELECT * FROM users WHERE email = 'Ana@Example.com';",
    "What does this query return if the table is empty, and why is that different from GROUP BY?\n"
    "SELECT COUNT(*), SUM(amount), MAX(amount) FROM refunds;",
    "Rewrite this query so it no longer needs DISTINCT, and explain why the DISTINCT was hiding a problem:\n"
    "SELECT DISTINCT a.id, a.title\n"
    "FROM articles a JOIN comments c ON c.article_id = a.id\n"
    "WHERE c.flagged = false;",
    "Explain what this query finds in a sessions table:\n"
    "SELECT user_id, started_at,\n"
    "  started_at - LAG(ended_at) OVER (PARTITION BY user_id ORDER BY started_at) AS idle\n"
    "FROM sessions;",
    "Why does this insert fail with a foreign key violation even though the customer exists?\n"
    "BEGIN;\n"
    "INSERT INTO orders (id, customer_id) VALUES (1, 55);\n"
    "INSERT INTO customers (id, name) VALUES (55, 'Ana');\n"
    "COMMIT;",
    "Convert this correlated subquery into a window function query:\n"
    "SELECT e.name, e.salary FROM employees e\n"
    "WHERE e.salary = (SELECT MAX(salary) FROM employees x WHERE x.department_id = e.department_id);",
    "What does this return for the row where qty is NULL, and how would you make it return 0 instead?\n"
    "SELECT sku, qty * price AS line_value FROM cart_items;",
    "Explain why this pagination query gets slower on later pages and how to fix it:\n"
    "SELECT * FROM products ORDER BY id LIMIT 50 OFFSET 200000;",
]


def _fill_more(template: str, schema: dict, rng: random.Random) -> str:
    cv, cv2, cv3 = rng.sample(schema["cats"], 3)
    values = dict(schema)
    values.update(
        cv=cv, cv2=cv2, cv3=cv3, CV=cv.upper(),
        year=rng.choice([2021, 2022, 2023, 2024, 2025]),
        n=rng.choice([3, 4, 5, 10, 20]),
        k=rng.choice([3, 5, 10, 20]),
        days=rng.choice([7, 14, 30, 90]),
        Parents=schema["parents"][0].upper() + schema["parents"][1:],
    )
    return template.format(**values)


def _extended(seen: set[str]) -> list[tuple[str, str]]:
    """The appended prompts: the original templates that show a schema, on the new schemas (their groups grow);
    the new templates on old and new schemas; multi-table questions (one group per schema); new concepts and
    snippets (one group each)."""
    rng = random.Random(20251204)
    out: list[tuple[str, str]] = []

    def pool(template: str, schemas: list[dict]) -> tuple[str, list[dict], int]:
        per = 5 if template.startswith("=") else 22
        template = template.lstrip("=")
        if template.startswith("+"):
            return template[1:], [s for s in schemas if s.get("additive", True)], per
        return template, schemas, per

    for section, templates in _TEMPLATES.items():
        for i, template in enumerate(templates, start=1):
            if "{ddl}" not in template and "{pddl}" not in template:
                continue  # the schema would only rename columns in an otherwise identical query
            template, schemas, _ = pool(template, _MORE_SCHEMAS)
            for schema in rng.sample(schemas, 10):
                out.append((f"{section}-template-{i}", _fill_more(template, schema, rng)))
    every = _SCHEMAS + _MORE_SCHEMAS
    for section, templates in _MORE_TEMPLATES.items():
        for i, template in enumerate(templates, start=1):
            template, schemas, per = pool(template, every)
            for schema in rng.sample(schemas, per):
                out.append((f"{section}-template-{i}", _fill_more(template, schema, rng)))
    for name, tables, questions in _STARS:
        for q in questions:
            out.append((f"star-{name}", rng.choice(_STAR_FORMS).format(tables=tables, q=q)))
    out.extend((f"concept-{i}", text) for i, text in enumerate(_MORE_CONCEPTS, start=len(_CONCEPTS) + 1))
    out.extend((f"snippet-{i}", text) for i, text in enumerate(_MORE_SNIPPETS, start=len(_SNIPPETS) + 1))
    rng.shuffle(out)
    result = []
    for group, text in out:
        text = text.strip()
        if text and text not in seen:
            seen.add(text)
            result.append((group, text))
    return result


def prompts() -> list[tuple[str, str]]:
    """(group, prompt) pairs: the original prompts first, unchanged, then the extension. A request template's
    prompts share a group ("join-template-2"), as do the questions on one multi-table schema ("star-shop"); every
    standalone question and snippet is its own group."""
    result = _original()
    result += _extended({text for _, text in result})
    assert len(result) >= 1850, len(result)
    return result
