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


def prompts() -> list[tuple[str, str]]:
    """(group, prompt) pairs: a request template's prompts share a group ("join-template-2"); every
    standalone question and snippet is its own group."""
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
