"""Python prompt set: writing functions, explaining and debugging snippets, stdlib, classes,
tests, complexity, refactoring, comprehensions, error handling, file IO and typing."""

import random

# (signature, description as a verb phrase, needs_imports)
_FUNCS = [
    ("is_palindrome(text: str) -> bool",
     "returns True if the text reads the same forwards and backwards, ignoring case, spaces, and punctuation", False),
    ("chunk(items: list, size: int) -> list[list]",
     "splits a list into consecutive chunks of the given size, with a shorter last chunk if needed", False),
    ("flatten(nested: list) -> list",
     "flattens an arbitrarily nested list of lists into a single flat list", False),
    ("word_count(text: str) -> dict[str, int]",
     "counts how often each word appears in a string, treating words case-insensitively", False),
    ("second_largest(nums: list[int]) -> int | None",
     "returns the second largest distinct value in a list, or None if there isn't one", False),
    ("merge_intervals(intervals: list[tuple[int, int]]) -> list[tuple[int, int]]",
     "merges overlapping intervals such as [(1, 3), (2, 6), (8, 10)] into [(1, 6), (8, 10)]", False),
    ("binary_search(sorted_nums: list[int], target: int) -> int",
     "returns the index of target in a sorted list using binary search, or -1 if it is missing", False),
    ("two_sum(nums: list[int], target: int) -> tuple[int, int] | None",
     "finds the indices of two numbers that add up to a given target in a single pass", False),
    ("rle_encode(text: str) -> str",
     "run-length encodes a string, turning 'aaabcc' into 'a3b1c2'", False),
    ("rle_decode(encoded: str) -> str",
     "reverses run-length encoding, turning 'a3b1c2' back into 'aaabcc'", False),
    ("is_anagram(a: str, b: str) -> bool",
     "checks whether two strings are anagrams of each other, ignoring spaces and case", False),
    ("fizzbuzz(n: int) -> list[str]",
     "returns the FizzBuzz sequence from 1 to n as a list of strings", False),
    ("roman_to_int(numeral: str) -> int",
     "converts a Roman numeral like 'MCMXCIV' into an integer", False),
    ("int_to_roman(number: int) -> str",
     "converts an integer between 1 and 3999 into a Roman numeral", False),
    ("rotate_matrix(matrix: list[list[int]]) -> list[list[int]]",
     "rotates a square matrix 90 degrees clockwise and returns the new matrix", False),
    ("dedupe(items: list) -> list",
     "removes duplicates from a list while keeping the original order", False),
    ("caesar(text: str, shift: int) -> str",
     "applies a Caesar cipher to letters only, keeping case and leaving other characters alone", False),
    ("is_valid_brackets(text: str) -> bool",
     "checks whether the brackets (), [] and {} in a string are balanced and properly nested", False),
    ("fib(n: int) -> int",
     "returns the n-th Fibonacci number iteratively, with fib(0) == 0 and fib(1) == 1", False),
    ("primes_up_to(limit: int) -> list[int]",
     "returns all primes less than or equal to a given limit using the Sieve of Eratosthenes", False),
    ("gcd(a: int, b: int) -> int",
     "computes the greatest common divisor of two integers with Euclid's algorithm", False),
    ("transpose(rows: list[list]) -> list[list]",
     "transposes a rectangular list of lists, so rows become columns", False),
    ("capitalize_words(sentence: str) -> str",
     "capitalizes the first letter of every word in a sentence without changing the rest", False),
    ("count_vowels(text: str) -> int",
     "counts the vowels in a string, case-insensitively", False),
    ("running_average(values: list[float]) -> list[float]",
     "returns the running average after each element of the input list", False),
    ("digits_sum(n: int) -> int",
     "returns the sum of the decimal digits of a non-negative integer without converting it to a string", False),
    ("longest_common_prefix(words: list[str]) -> str",
     "returns the longest prefix shared by all strings in the list", False),
    ("invert_dict(d: dict) -> dict",
     "swaps keys and values in a dictionary, collecting keys that share a value into a list", False),
    ("group_by_length(words: list[str]) -> dict[int, list[str]]",
     "groups words into a dictionary keyed by word length", False),
    ("clamp(value: float, low: float, high: float) -> float",
     "limits a value to the closed range [low, high]", False),
    ("pairwise_diff(nums: list[int]) -> list[int]",
     "returns the differences between each pair of neighbouring numbers", False),
    ("max_subarray_sum(nums: list[int]) -> int",
     "returns the largest sum of a contiguous subarray using Kadane's algorithm", False),
    ("is_leap_year(year: int) -> bool",
     "tells whether a year is a leap year in the Gregorian calendar", False),
    ("to_snake_case(name: str) -> str",
     "converts a CamelCase identifier such as 'HttpResponseCode' into snake_case", True),
    ("parse_duration(text: str) -> int",
     "parses strings like '1h30m' or '45s' into a total number of seconds", True),
    ("extract_emails(text: str) -> list[str]",
     "finds all email addresses in a block of text with a regular expression", True),
    ("slugify(title: str) -> str",
     "turns a title like 'Hello, World!' into a URL slug like 'hello-world'", True),
    ("top_k_words(text: str, k: int) -> list[tuple[str, int]]",
     "returns the k most common words in a text together with their counts", True),
    ("days_between(start: str, end: str) -> int",
     "returns the number of days between two dates given as 'YYYY-MM-DD' strings", True),
    ("next_weekday(day: date) -> date",
     "returns the next Monday-to-Friday date after the given date", True),
    ("read_config(path: str) -> dict",
     "loads a JSON config file and returns an empty dict if the file does not exist", True),
    ("largest_files(folder: str, n: int) -> list[tuple[str, int]]",
     "returns the n largest files under a folder, searched recursively, with their sizes in bytes", True),
    ("sha256_of_file(path: str) -> str",
     "returns the SHA-256 hex digest of a file, reading it in chunks", True),
    ("csv_column_sum(path: str, column: str) -> float",
     "reads a CSV file with a header row and returns the sum of one numeric column", True),
    ("all_permutations(s: str) -> list[str]",
     "returns every distinct permutation of the characters in a string", True),
    ("sliding_windows(items: list, size: int) -> list[tuple]",
     "returns every contiguous window of the given size, e.g. [(1, 2, 3), (2, 3, 4)] for size 3", False),
    ("matrix_multiply(a: list[list[float]], b: list[list[float]]) -> list[list[float]]",
     "multiplies two matrices given as nested lists and raises ValueError if the shapes do not match", False),
    ("k_smallest(nums: list[int], k: int) -> list[int]",
     "returns the k smallest numbers in ascending order using a heap", True),
    ("is_valid_ipv4(address: str) -> bool",
     "checks whether a string is a valid dotted IPv4 address such as '192.168.0.1'", False),
    ("compress_spaces(text: str) -> str",
     "collapses runs of whitespace into a single space and strips both ends", False),
    ("weighted_choice(options: dict[str, float], rng: random.Random) -> str",
     "picks a key at random with probability proportional to its weight", True),
    ("nested_get(data: dict, path: str, default=None)",
     "looks up a dotted path like 'user.address.city' in nested dictionaries and returns default if any key is missing", False),
    ("histogram(values: list[int]) -> str",
     "returns a text histogram with one line per distinct value and one '*' per occurrence", False),
    ("bfs_shortest_path(graph: dict[str, list[str]], start: str, goal: str) -> list[str] | None",
     "finds the shortest path between two nodes of an unweighted graph with breadth-first search", True),
    ("topological_sort(deps: dict[str, list[str]]) -> list[str]",
     "orders tasks so each comes after its dependencies, raising ValueError on a cycle", False),
    ("format_bytes(size: int) -> str",
     "formats a byte count as a human-readable string such as '1.5 KB' or '3.2 MB'", False),
    ("memoized_paths(rows: int, cols: int) -> int",
     "counts the paths from the top-left to the bottom-right of a grid moving only right or down, using memoization", True),
    ("parse_query_string(query: str) -> dict[str, str]",
     "parses a URL query string like 'a=1&b=hello' into a dictionary", False),
    ("mask_card_number(number: str) -> str",
     "hides all but the last four digits of a card number with '*' characters", False),
    ("median(values: list[float]) -> float",
     "returns the median of a non-empty list without using the statistics module", False),
    ("zip_dicts(keys: list[str], rows: list[list]) -> list[dict]",
     "turns a header list and a list of rows into a list of dictionaries", False),
    ("is_power_of_two(n: int) -> bool",
     "tells whether a positive integer is a power of two using a bit trick", False),
    ("title_case_names(names: list[str]) -> list[str]",
     "normalizes names like 'aDA lovelace' to 'Ada Lovelace', keeping the original order", False),
    ("balance_after(transactions: list[tuple[str, float]], start: float) -> float",
     "applies ('deposit', amount) and ('withdraw', amount) tuples to a starting balance and returns the result", False),
]

_FUNC_TEMPLATES = [
    "Write a Python function `{sig}` that {desc}.",
    "Implement `{sig}` in Python. It {desc}. Include a short docstring.",
    "How would I write a Python function called `{name}` that {desc}?",
    "Write three pytest test cases for a function `{sig}` that {desc}. Make one of them an edge case.",
    "I need a function `{name}` that {desc}. Give a clean implementation and state its time complexity.",
    "Write `{sig}`, which {desc}, and add a doctest with one example call.",
    "Write a function `{name}` that {desc}. What inputs could break it, and how does your version handle them?",
]
# Only for functions that need no imports.
_PURE_TEMPLATES = [
    "Without importing anything, write `{sig}` that {desc}. Keep it short.",
]

_EXPLAIN_PREFIXES = [
    "What does this Python code print, and why?",
    "Explain what this code does, line by line:",
    "What is the output of the following snippet?",
    "Walk me through what happens when this runs:",
]

_EXPLAIN_SNIPPETS = [
    "nums = [3, 1, 4, 1, 5]\nprint(sorted(set(nums))[-2])",
    "words = ['apple', 'Bob', 'cherry']\nprint(sorted(words, key=str.lower))\nprint(sorted(words))",
    "a = [1, 2, 3]\nb = a\nb.append(4)\nprint(a, a is b)",
    "def gen():\n    yield 1\n    yield 2\n\ng = gen()\nprint(list(g), list(g))",
    "x = {'a': 1, 'b': 2}\ny = {**x, 'b': 3, 'c': 4}\nprint(y)",
    "print([i * j for i in range(1, 4) for j in range(i)])",
    "from itertools import accumulate\nprint(list(accumulate([1, 2, 3, 4])))",
    "s = 'hello world'\nprint(s[::-1], s[::2], s[-5:])",
    "from collections import defaultdict\nd = defaultdict(list)\nfor w in ['ant', 'bee', 'ape']:\n    d[w[0]].append(w)\nprint(dict(d))",
    "funcs = [lambda: i for i in range(3)]\nprint([f() for f in funcs])",
    "print(0.1 + 0.2 == 0.3, round(0.1 + 0.2, 10) == 0.3)",
    "t = (1, [2, 3])\nt[1].append(4)\nprint(t)",
    "print(list(zip('abc', [1, 2])))",
    "def f(*args, **kwargs):\n    return len(args), sorted(kwargs)\n\nprint(f(1, 2, z=3, a=4))",
    "print(any([]), all([]), bool([0]))",
    "x = 5\ndef bump():\n    global x\n    x += 1\nbump()\nprint(x)",
    "print({n: n % 3 for n in range(6) if n % 2 == 0})",
    "import functools\nprint(functools.reduce(lambda acc, c: c + acc, 'abc', ''))",
    "class A:\n    count = 0\n    def __init__(self):\n        A.count += 1\n\nA(); A()\nprint(A.count)",
    "print(divmod(17, 5), 17 // -5, -17 % 5)",
    "items = ['x', 'y', 'z']\nfor i, item in enumerate(items, start=1):\n    print(f'{i}. {item}')",
    "data = [('b', 2), ('a', 2), ('c', 1)]\nprint(sorted(data, key=lambda p: (-p[1], p[0])))",
    "print('-'.join(map(str, range(5))), 'a,b,,c'.split(','))",
    "first, *middle, last = [10, 20, 30, 40]\nprint(first, middle, last)",
]

_DEBUG = [
    "This function is supposed to collect items per call, but the list keeps growing across "
    "calls. Why, and how do I fix it?\n"
    "def add_item(item, bucket=[]):\n    bucket.append(item)\n    return bucket",
    "I want to remove all even numbers, but some stay in the list. What is wrong?\n"
    "nums = [2, 4, 5, 6, 8]\nfor n in nums:\n    if n % 2 == 0:\n        nums.remove(n)\nprint(nums)",
    "Why does this print None instead of the sorted list?\n"
    "scores = [70, 95, 82]\nranked = scores.sort()\nprint(ranked)",
    "This average function crashes on some inputs. Find the bug and fix it:\n"
    "def average(values):\n    return sum(values) / len(values)\n\nprint(average([]))",
    "This loop never stops. What is the mistake?\n"
    "i = 0\nwhile i < 10:\n    if i % 2 == 0:\n        continue\n    i += 1",
    "My recursive factorial raises RecursionError. Why?\n"
    "def fact(n):\n    return n * fact(n - 1)",
    "Why does this raise 'RuntimeError: dictionary changed size during iteration', and what "
    "is a safe way to do it?\n"
    "ages = {'ann': 31, 'bo': 17, 'cy': 15}\nfor name in ages:\n    if ages[name] < 18:\n        del ages[name]",
    "This code is meant to count lines in a file, but it always prints 0 the second time. Why?\n"
    "with open('log.txt') as f:\n    print(sum(1 for _ in f))\n    print(sum(1 for _ in f))",
    "Why does this comparison sometimes fail for equal strings built at runtime?\n"
    "def is_admin(role):\n    return role is 'admin'",
    "This function should return the largest number, but for [-5, -2, -9] it returns 0. Fix it.\n"
    "def biggest(nums):\n    best = 0\n    for n in nums:\n        if n > best:\n            best = n\n    return best",
    "What is wrong with this exception handling, and how should it be written?\n"
    "try:\n    value = int(user_input)\nexcept:\n    pass",
    "The async code below prints a coroutine object instead of the data. What did I forget?\n"
    "import asyncio\n\nasync def fetch():\n    await asyncio.sleep(1)\n    return 42\n\nasync def main():\n    result = fetch()\n    print(result)\n\nasyncio.run(main())",
    "This grid ends up with the same value in every row. Why?\n"
    "grid = [[0] * 3] * 3\ngrid[0][0] = 1\nprint(grid)",
    "Why does this raise UnboundLocalError?\n"
    "total = 0\ndef add(n):\n    total += n\n    return total",
    "This function is supposed to reverse words in a sentence but returns a list. Fix it.\n"
    "def reverse_words(s):\n    return s.split()[::-1]",
    "I shadowed something important here and now the code crashes. What happened?\n"
    "list = [1, 2, 3]\nletters = list('abc')",
    "The price check fails even though the total looks like 0.3. Why, and what should I use "
    "instead?\ntotal = 0.1 + 0.2\nif total == 0.3:\n    print('ok')",
    "This binary search loops forever on some inputs. Where is the bug?\n"
    "def search(a, x):\n    lo, hi = 0, len(a) - 1\n    while lo <= hi:\n        mid = (lo + hi) // 2\n"
    "        if a[mid] < x:\n            lo = mid\n        elif a[mid] > x:\n            hi = mid - 1\n"
    "        else:\n            return mid\n    return -1",
    "Why does this class share the same tags between all instances?\n"
    "class Post:\n    tags = []\n    def add_tag(self, tag):\n        self.tags.append(tag)",
    "This code raises TypeError: can only concatenate str (not \"int\") to str. Fix it in two "
    "different ways.\nage = 30\nprint('Age: ' + age)",
    "The JSON file comes out empty. What is wrong?\n"
    "import json\nf = open('out.json', 'w')\njson.dump({'a': 1}, f)",
    "I wanted to replace every 'b' with 'x', but this prints 1 instead of 0. Why?\n"
    "text = 'abba'\nprint(text.replace('b', 'x', 1).count('b'))",
    "This date parsing raises ValueError. What is wrong with the format string?\n"
    "from datetime import datetime\ndatetime.strptime('2024-03-07', '%Y-%d-%m %H')",
    "My function returns None for valid input. Where is the bug?\n"
    "def grade(score):\n    if score >= 90:\n        return 'A'\n    elif score >= 80:\n        'B'\n    else:\n        return 'C'",
    "This regular expression should match prices like $12.50 but matches nothing. Why?\n"
    "import re\nprint(re.findall('$\\d+.\\d\\d', 'Total: $12.50'))",
]

_STDLIB = [
    "How do I use itertools.groupby to group a list of (city, temperature) tuples by city? "
    "Mention the sorting requirement.",
    "Show how itertools.combinations and itertools.permutations differ using the letters 'ABC'.",
    "Use itertools.chain to loop over three lists as if they were one. Show a short example.",
    "How do I use itertools.product to generate every combination of sizes ['S', 'M'] and "
    "colors ['red', 'blue']?",
    "How do I find the three most common words in a string using collections.Counter?",
    "When should I use collections.deque instead of a list? Show appendleft and popleft.",
    "Show how to use collections.namedtuple to represent a point with x and y fields.",
    "How does collections.OrderedDict.move_to_end help when building a simple LRU cache?",
    "Using pathlib, list every .csv file in a folder and its subfolders, and print each file's size.",
    "How do I read and write a text file with pathlib.Path in one line each?",
    "How do I get a file's name, stem, suffix, and parent directory with pathlib?",
    "Write a regular expression with the re module that extracts all dates in the format "
    "YYYY-MM-DD from a string.",
    "What is the difference between re.match, re.search, and re.fullmatch? Give a one-line "
    "example of each.",
    "How do I use named groups in a Python regex to pull the user and domain out of an email address?",
    "How do I pretty-print a dictionary as JSON with sorted keys and an indent of 2?",
    "json.dumps fails on a datetime object. How do I serialize it anyway?",
    "How do I load a JSON file into a Python dict and handle the case where the file contains invalid JSON?",
    "How do I get today's date and the date 30 days from now with the datetime module?",
    "How do I convert the string '2024-07-15 14:30' into a datetime object and back into "
    "the format '15 Jul 2024'?",
    "What is the difference between a naive and an aware datetime in Python? Show how to "
    "create an aware one in UTC.",
    "Write a dataclass Product with name, price, and a tags list that defaults to empty. "
    "Why can't I write tags: list = []?",
    "How do I make a dataclass immutable and sortable by one of its fields?",
    "Show how to use dataclasses.asdict and dataclasses.replace on a small dataclass.",
    "Write an asyncio program that runs three fake downloads concurrently with asyncio.gather "
    "and prints when each finishes.",
    "How do I put a timeout on a slow coroutine with asyncio?",
    "What is the difference between asyncio.gather and asyncio.create_task?",
    "Use functools.lru_cache to speed up a recursive Fibonacci function, and explain why it helps.",
    "What does functools.wraps do when writing a decorator? Show a timing decorator that uses it.",
    "Write a context manager with contextlib.contextmanager that temporarily changes the "
    "current working directory.",
    "Write a small argparse script that accepts a filename and an optional --verbose flag.",
    "How do I write a list of dictionaries to a CSV file with csv.DictWriter?",
    "How do I run the shell command 'git status' from Python and capture its output with subprocess?",
    "Set up the logging module so messages at INFO and above go to a file with timestamps.",
    "Define an enum Color with RED, GREEN, and BLUE, and show how to loop over its members.",
    "Use heapq to keep track of the 5 largest numbers seen in a stream.",
    "How do I use the bisect module to insert into a sorted list and keep it sorted?",
    "Compute the mean, median, and standard deviation of a list with the statistics module.",
    "How do I create a temporary directory that is deleted automatically afterwards?",
    "Show how to run a function on a list of URLs in parallel with "
    "concurrent.futures.ThreadPoolExecutor.",
    "How do I read an environment variable in Python with a fallback default value?",
    "How do I time a small piece of code with the timeit module?",
    "How do I store and query a small table with the sqlite3 module? Show create, insert, and select.",
    "Use textwrap to wrap a long paragraph to 40 characters per line.",
    "How do I generate a random UUID and a secure random token in Python?",
]

_CLASSES = [
    "Write a BankAccount class with deposit and withdraw methods. Withdrawing more than the "
    "balance should raise a ValueError.",
    "Implement a Stack class backed by a list, with push, pop, peek, and is_empty methods.",
    "Write a Temperature class that stores Celsius and exposes a fahrenheit property with a getter and setter.",
    "Write a Vector2D class that supports +, -, scalar *, == and a readable __repr__.",
    "Create a Rectangle class with area and perimeter methods, then a Square subclass that "
    "only takes one side length.",
    "Write an abstract base class Shape with an abstract area method, and two concrete shapes.",
    "Write an iterator class Countdown that counts from n down to 1 when used in a for loop.",
    "Write a Timer class usable as a context manager that prints how long the block took.",
    "Implement a tiny LRU cache class with get and put and a fixed capacity.",
    "Write an Inventory class that tracks item quantities and refuses to remove more items than exist.",
    "Make a Money class that stores cents as an int and can be added to other Money objects. "
    "Why is an int better than a float here?",
    "Write a Matrix class that supports indexing with m[i, j] and a transpose method.",
    "Write a class Playlist that supports len(), iteration, and the in operator.",
    "Implement a Queue class using two stacks, and explain the amortized cost of dequeue.",
    "Write a TrafficLight enum with a next() method that cycles green, yellow, red.",
    "Write a class whose instances are equal when their ids match, and make it usable as a dict key.",
    "Add a classmethod from_string to a Date class so Date.from_string('2024-01-31') works.",
    "Write a simple event emitter class with on(event, handler) and emit(event, *args).",
    "What do __slots__ do in a Python class? Show a small example and one downside.",
    "Write a class Counter that tracks how many instances have been created, using a class attribute.",
]

_CONCEPTS = [
    "What is the difference between a list and a tuple in Python, and when would you pick each?",
    "What does the yield keyword do? Show a tiny generator.",
    "Explain *args and **kwargs with a short example.",
    "What is the GIL in CPython, and how does it affect threads doing CPU-bound work?",
    "What is the difference between a shallow copy and a deep copy? Show it with a nested list.",
    "What is a decorator in Python? Write one that prints the name of each function it wraps when called.",
    "When should I use `is` instead of `==` in Python?",
    "What is the difference between @staticmethod and @classmethod?",
    "Why do Python scripts often end with if __name__ == '__main__':?",
    "What does the with statement do, and what methods does an object need to support it?",
    "How does a generator expression differ from a list comprehension in memory use?",
    "What is duck typing? Give a short example.",
    "What does the walrus operator := do? Show a case where it makes code shorter.",
    "What is the difference between __str__ and __repr__?",
    "Explain Python's method resolution order with a small multiple-inheritance example.",
    "Why are strings immutable in Python, and what does that mean for building a long string in a loop?",
    "What is the difference between `import module` and `from module import name`?",
    "What are Python's truthy and falsy values? List the common falsy ones.",
    "How does Python's garbage collection handle reference cycles?",
    "What is a virtual environment, and how do I create and activate one with venv?",
    "How do keyword-only and positional-only parameters work? Explain the * and / markers in a signature.",
    "Why is Python's built-in sort called stable, and when does that matter?",
    "What does the nonlocal keyword do? Show a counter made with a closure.",
    "Explain the difference between an iterable and an iterator.",
]

_COMPLEXITY = [
    "What is the time complexity of this function, and can it be improved?\n"
    "def has_duplicate(nums):\n    for i in range(len(nums)):\n        for j in range(i + 1, len(nums)):\n"
    "            if nums[i] == nums[j]:\n                return True\n    return False",
    "What is the Big-O time of this code? Assume both lists have n elements.\n"
    "common = [x for x in a if x in b]",
    "Why is this recursive Fibonacci so slow, and what is its time complexity?\n"
    "def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)",
    "What is the time and space complexity of this function?\n"
    "def pairs(nums):\n    seen = set()\n    for n in nums:\n        seen.add(n)\n    return len(seen)",
    "What is the time complexity of building a string like this, and what is the faster idiom?\n"
    "out = ''\nfor word in words:\n    out += word + ' '",
    "What is the complexity of this function in terms of n?\n"
    "def halves(n):\n    steps = 0\n    while n > 1:\n        n //= 2\n        steps += 1\n    return steps",
    "What are the average-case costs of lookup in a Python dict, a list, and a set?",
    "What is the overall complexity of sorting a list and then scanning it once? Explain briefly.",
    "Is list.pop(0) cheap in Python? What should I use if I pop from the front often?",
    "What is the time complexity of this nested loop?\n"
    "for i in range(n):\n    for j in range(i, n, 2):\n        total += 1",
]

_REFACTOR = [
    "Refactor this into a list comprehension:\n"
    "result = []\nfor x in data:\n    if x > 0:\n        result.append(x * 2)",
    "Rewrite this loop using enumerate:\n"
    "i = 0\nfor name in names:\n    print(i, name)\n    i += 1",
    "Simplify this with dict.get:\n"
    "if key in counts:\n    counts[key] += 1\nelse:\n    counts[key] = 1",
    "Make this more Pythonic with any():\n"
    "found = False\nfor u in users:\n    if u.is_admin:\n        found = True\n        break",
    "Rewrite this with zip instead of indexes:\n"
    "for i in range(len(names)):\n    print(names[i], scores[i])",
    "Refactor this function to use early returns and less nesting:\n"
    "def check(user):\n    if user:\n        if user.active:\n            if user.email:\n"
    "                return True\n    return False",
    "Replace this manual counting with collections.Counter:\n"
    "freq = {}\nfor ch in text:\n    if ch not in freq:\n        freq[ch] = 0\n    freq[ch] += 1",
    "Rewrite this code using pathlib instead of os.path:\n"
    "import os\npath = os.path.join(os.path.dirname(__file__), 'data', 'input.txt')\n"
    "if os.path.exists(path):\n    text = open(path).read()",
    "Turn this class into a dataclass:\n"
    "class Point:\n    def __init__(self, x, y):\n        self.x = x\n        self.y = y\n"
    "    def __repr__(self):\n        return f'Point({self.x}, {self.y})'",
    "Refactor this so the file is always closed, even on error:\n"
    "f = open('data.txt')\nlines = f.readlines()\nf.close()",
    "This function does too many things. Suggest how to split it:\n"
    "def report(path):\n    rows = [l.split(',') for l in open(path)]\n"
    "    total = sum(float(r[2]) for r in rows)\n    print(f'Total: {total:.2f}')\n"
    "    with open('report.txt', 'w') as f:\n        f.write(str(total))",
    "Rewrite this if/elif chain with a dictionary lookup:\n"
    "def op(sym, a, b):\n    if sym == '+':\n        return a + b\n    elif sym == '-':\n"
    "        return a - b\n    elif sym == '*':\n        return a * b",
    "Use str.join to simplify this:\n"
    "s = ''\nfor i, w in enumerate(words):\n    s += w\n    if i < len(words) - 1:\n        s += ', '",
    "Replace these two loops with a single call to sorted and a slice:\n"
    "best = []\nfor _ in range(3):\n    m = max(scores)\n    best.append(m)\n    scores.remove(m)",
]

_COMPREHENSIONS = [
    "Write a list comprehension that gives the squares of the even numbers from 1 to 20.",
    "Flatten [[1, 2], [3], [4, 5, 6]] into one list with a single list comprehension.",
    "Using a dict comprehension, map each word in a sentence to its length.",
    "Write a set comprehension that collects the first letter of each name in a list, lowercased.",
    "In one line, build a dictionary that swaps the keys and values of {'a': 1, 'b': 2}.",
    "Write a list comprehension that keeps only the strings in a mixed list like [1, 'a', 2.5, 'b'].",
    "Use a nested comprehension to create a 3x4 matrix of zeros. Why is [[0] * 4] * 3 risky?",
    "Write a generator expression that sums the lengths of all lines in a file without loading it all.",
    "Create a list of (number, 'even' or 'odd') tuples for 1 to 10 with a conditional expression "
    "inside a comprehension.",
    "With a dict comprehension, keep only the entries of a price dictionary whose value is under 10.",
    "Write a comprehension that extracts all digits from the string 'a1b22c333' as integers.",
    "Use a comprehension to get the diagonal of a square matrix stored as a list of lists.",
]

_ERRORS_IO = [
    "Write a function that retries a callable up to 3 times when it raises ConnectionError, "
    "waiting one second between attempts.",
    "Define a custom exception InsufficientFundsError that stores the missing amount, and show "
    "how to raise and catch it.",
    "What is the order in which try, except, else, and finally blocks run? Give a short example.",
    "Why is catching bare Exception usually a bad idea? When is it acceptable?",
    "How do I re-raise an exception with extra context using raise ... from ...?",
    "How do I read a large log file line by line and count the lines that contain 'ERROR'?",
    "Write code that appends a timestamped line to a log file each time it runs.",
    "How do I read a file that might be encoded in UTF-8 or Latin-1 without crashing?",
    "Write a function that safely converts a string to an int and returns None instead of raising.",
    "How do I write bytes to a binary file and read them back?",
    "How do I write a file atomically so readers never see a half-written version?",
    "What does the error 'FileNotFoundError: [Errno 2]' usually mean when the file clearly exists?",
]

_TYPING = [
    "Add type hints to this function:\n"
    "def merge(a, b):\n    result = dict(a)\n    result.update(b)\n    return result",
    "How do I annotate a function that accepts any iterable of ints and returns a list of strings?",
    "What does TypedDict give me compared to a plain dict annotation? Show a small example.",
    "How do I type a callback parameter that takes an int and returns a str?",
    "Write a generic Stack[T] class using TypeVar so mypy knows what pop() returns.",
    "When should I use typing.Literal? Show it for a mode parameter that accepts 'r' or 'w'.",
    "What is the difference between Optional[int] and int | None, and which should I use today?",
    "How does typing.Protocol let me type duck-typed code? Give a short example with a .read() method.",
    "Add type hints to this function and say what mypy would report:\n"
    "def first_word(text):\n    parts = text.split()\n    return parts[0] if parts else None",
    "What is the purpose of typing.overload? Show a function that returns str for str input and "
    "int for int input.",
]


# Standalone prompts, each its own group.
_STANDALONE = {
    "debug": _DEBUG, "stdlib": _STDLIB, "class": _CLASSES, "concept": _CONCEPTS, "complexity": _COMPLEXITY,
    "refactor": _REFACTOR, "comprehension": _COMPREHENSIONS, "errors-io": _ERRORS_IO, "typing": _TYPING,
}


def prompts() -> list[tuple[str, str]]:
    """(group, prompt) pairs: the requests for one function share a group ("function-chunk"); every explained
    snippet and standalone prompt is its own group."""
    rng = random.Random(7340)
    out: list[tuple[str, str]] = []
    for sig, desc, needs_imports in _FUNCS:
        name = sig.split("(", 1)[0]
        templates = list(_FUNC_TEMPLATES)
        if not needs_imports:
            templates += _PURE_TEMPLATES
        for template in rng.sample(templates, 3):
            out.append((f"function-{name}", template.format(sig=sig, name=name, desc=desc)))
    for i, snippet in enumerate(_EXPLAIN_SNIPPETS, start=1):
        prefix = rng.choice(_EXPLAIN_PREFIXES)
        out.append((f"explain-snippet-{i}", f"{prefix}\n{snippet}"))
    for kind, texts in _STANDALONE.items():
        out.extend((f"{kind}-{i}", text) for i, text in enumerate(texts, start=1))
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
