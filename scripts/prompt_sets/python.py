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


def _original() -> list[tuple[str, str]]:
    """The first 387 prompts, unchanged: the requests for one function share a group ("function-chunk"); every
    explained snippet and standalone prompt is its own group."""
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


# ---------------------------------------------------------------------------
# Extension: more functions and algorithm problems, data structures, library tasks, bug patterns in varied code,
# snippets to explain, scripts, refactors and concept questions. Appended after the original prompts.
# ---------------------------------------------------------------------------
# (signature, description as a verb phrase, needs_imports)
_MORE_FUNCS = [
    ("word_frequencies_by_line(lines: list[str]) -> list[dict[str, int]]",
     "returns, for every line, a dictionary of how often each lowercase word occurs in it", False),
    ("normalize_phone(raw: str) -> str | None",
     "turns inputs like '(555) 123-4567' or '555.123.4567' into '5551234567' and returns None when there are not exactly ten digits", False),
    ("split_full_name(name: str) -> tuple[str, str]",
     "splits a full name into first name and last name, treating everything after the first word as the last name", False),
    ("spiral_order(matrix: list[list[int]]) -> list[int]",
     "returns the elements of a matrix in clockwise spiral order starting at the top-left corner", False),
    ("pascal_row(n: int) -> list[int]",
     "returns row n of Pascal's triangle, where row 0 is [1]", False),
    ("luhn_valid(card: str) -> bool",
     "checks a card number with the Luhn checksum, ignoring spaces", False),
    ("base_convert(number: int, base: int) -> str",
     "writes a non-negative integer in any base from 2 to 36 using digits and lowercase letters", False),
    ("parse_csv_line(line: str) -> list[str]",
     "splits one CSV line on commas while respecting double-quoted fields that may contain commas", False),
    ("word_wrap(text: str, width: int) -> list[str]",
     "breaks a paragraph into lines no longer than width without splitting words", False),
    ("justify_line(words: list[str], width: int) -> str",
     "spreads spaces between words so the line is exactly width characters long, putting extra spaces on the left gaps", False),
    ("count_islands(grid: list[list[str]]) -> int",
     "counts groups of connected '1' cells (up, down, left, right) in a grid of '0' and '1' strings", False),
    ("min_coins(amount: int, coins: list[int]) -> int",
     "returns the fewest coins that add up to amount using dynamic programming, or -1 if it is impossible", False),
    ("edit_distance(a: str, b: str) -> int",
     "computes the Levenshtein distance between two strings", False),
    ("longest_increasing_subsequence(nums: list[int]) -> int",
     "returns the length of the longest strictly increasing subsequence", True),
    ("knapsack(weights: list[int], values: list[int], capacity: int) -> int",
     "solves the 0/1 knapsack problem and returns the best total value", False),
    ("group_anagrams(words: list[str]) -> list[list[str]]",
     "groups words that are anagrams of each other, keeping the first-seen order of the groups", True),
    ("find_duplicates(paths: list[str]) -> list[list[str]]",
     "groups file paths whose file contents are identical, comparing sizes first and hashes only when sizes match", True),
    ("ranges_to_text(nums: list[int]) -> str",
     "summarizes sorted integers as ranges, turning [1, 2, 3, 5, 7, 8] into '1-3, 5, 7-8'", False),
    ("text_to_ranges(text: str) -> list[int]",
     "expands a string like '1-3, 5, 7-8' into the list of integers it describes", False),
    ("percent_change(old: float, new: float) -> float | None",
     "returns the percentage change from old to new, or None when old is zero", False),
    ("moving_average(values: list[float], window: int) -> list[float]",
     "returns the simple moving average for each full window in O(n) time", False),
    ("bucket_by_hour(timestamps: list[datetime]) -> dict[int, int]",
     "counts how many timestamps fall into each hour of the day", True),
    ("business_days_between(start: date, end: date) -> int",
     "counts the weekdays from start up to but not including end", True),
    ("age_on(birthday: date, on: date) -> int",
     "returns a person's age in whole years on a given date, handling birthdays on February 29", True),
    ("next_palindrome(n: int) -> int",
     "returns the smallest palindromic number strictly greater than n", False),
    ("collatz_steps(n: int) -> int",
     "counts the steps the Collatz process takes to reach 1 from a positive integer", False),
    ("is_armstrong(n: int) -> bool",
     "tells whether a number equals the sum of its digits each raised to the number of digits", False),
    ("perfect_numbers(limit: int) -> list[int]",
     "returns the perfect numbers up to limit, such as 6 and 28", False),
    ("prime_factors(n: int) -> list[int]",
     "returns the prime factors of n in ascending order with repetition, e.g. [2, 2, 3] for 12", False),
    ("lcm_of_list(nums: list[int]) -> int",
     "returns the least common multiple of a list of positive integers", True),
    ("matrix_determinant(m: list[list[float]]) -> float",
     "computes the determinant of a square matrix by Gaussian elimination", False),
    ("dot_product(a: list[float], b: list[float]) -> float",
     "returns the dot product of two equal-length vectors and raises ValueError for different lengths", False),
    ("cosine_similarity(a: dict[str, float], b: dict[str, float]) -> float",
     "computes the cosine similarity of two sparse vectors stored as dictionaries", True),
    ("euclidean_nearest(points: list[tuple[float, float]], target: tuple[float, float]) -> tuple[float, float]",
     "returns the point closest to the target", True),
    ("polygon_area(vertices: list[tuple[float, float]]) -> float",
     "computes the area of a simple polygon with the shoelace formula", False),
    ("point_in_rectangle(point: tuple[float, float], rect: tuple[float, float, float, float]) -> bool",
     "tells whether a point lies inside an axis-aligned rectangle given as (x, y, width, height), edges included", False),
    ("bounding_box(points: list[tuple[float, float]]) -> tuple[float, float, float, float]",
     "returns the smallest axis-aligned box (min_x, min_y, max_x, max_y) that contains all points", False),
    ("haversine_km(lat1: float, lon1: float, lat2: float, lon2: float) -> float",
     "returns the great-circle distance in kilometres between two latitude/longitude points", True),
    ("celsius_table(start: int, stop: int, step: int) -> str",
     "returns a two-column text table of Celsius values and their Fahrenheit equivalents", False),
    ("parse_key_values(text: str) -> dict[str, str]",
     "parses lines of 'key = value' into a dictionary, skipping blank lines and lines starting with '#'", False),
    ("render_template(template: str, values: dict[str, str]) -> str",
     "replaces {{name}} placeholders with values and raises KeyError naming any placeholder without a value", True),
    ("strip_html_tags(html: str) -> str",
     "removes HTML tags from a string and collapses the remaining whitespace", True),
    ("truncate_words(text: str, max_words: int) -> str",
     "cuts text after max_words words and appends '...' only when something was cut", False),
    ("initials(name: str) -> str",
     "returns the uppercase initials of a name, so 'grace brewster hopper' becomes 'GBH'", False),
    ("reverse_each_word(sentence: str) -> str",
     "reverses the letters of every word but keeps the word order and the spacing", False),
    ("most_common_char(text: str) -> str",
     "returns the most frequent non-space character, breaking ties by first appearance", False),
    ("first_unique_char(text: str) -> int",
     "returns the index of the first character that appears only once, or -1", False),
    ("is_isogram(word: str) -> bool",
     "checks that no letter repeats in a word, ignoring case and hyphens", False),
    ("pangram_missing(text: str) -> str",
     "returns the letters of the alphabet that do not appear in the text, in order", True),
    ("vowel_consonant_ratio(text: str) -> float",
     "returns the ratio of vowels to consonants among the letters of a text", False),
    ("encode_base64_url(data: bytes) -> str",
     "encodes bytes as URL-safe base64 without padding", True),
    ("hex_to_rgb(color: str) -> tuple[int, int, int]",
     "converts a color like '#1e90ff' or '1E90FF' into an (r, g, b) tuple", False),
    ("rgb_to_hex(r: int, g: int, b: int) -> str",
     "converts three 0-255 channel values into a '#rrggbb' string and rejects out-of-range values", False),
    ("version_compare(a: str, b: str) -> int",
     "compares dotted version strings like '1.10.2' and '1.9' and returns -1, 0 or 1", False),
    ("parse_semver(version: str) -> tuple[int, int, int]",
     "parses 'MAJOR.MINOR.PATCH' and raises ValueError with a clear message for anything else", False),
    ("dedupe_by_key(records: list[dict], key: str) -> list[dict]",
     "keeps the first record for each value of the given key", False),
    ("merge_sorted(a: list[int], b: list[int]) -> list[int]",
     "merges two sorted lists into one sorted list in linear time", False),
    ("interleave(*lists: list) -> list",
     "takes items round-robin from several lists until all are exhausted", True),
    ("rotate_list(items: list, k: int) -> list",
     "rotates a list to the right by k positions, where k may be larger than the length or negative", False),
    ("partition(items: list, predicate) -> tuple[list, list]",
     "splits a list into the items that satisfy the predicate and those that do not, in one pass", False),
    ("frequency_sort(text: str) -> str",
     "reorders the characters of a string by descending frequency", True),
    ("top_n_by(records: list[dict], field: str, n: int) -> list[dict]",
     "returns the n records with the largest value in a field, skipping records that lack it", True),
    ("deep_merge(a: dict, b: dict) -> dict",
     "recursively merges two nested dictionaries, with values from b winning, without changing either input", False),
    ("flatten_dict(d: dict, sep: str = '.') -> dict",
     "flattens nested dictionaries into one level with joined keys like 'db.host'", False),
    ("unflatten_dict(d: dict, sep: str = '.') -> dict",
     "rebuilds nested dictionaries from keys like 'db.host'", False),
    ("diff_dicts(old: dict, new: dict) -> dict[str, list]",
     "reports which keys were added, removed and changed between two dictionaries", False),
    ("count_by(items: list, key) -> dict",
     "counts the items per value of a key function, like a tiny Counter with a key", False),
    ("chunk_text(text: str, max_chars: int) -> list[str]",
     "splits text into pieces of at most max_chars characters, breaking at sentence ends where possible", True),
    ("balanced_split(total: int, parts: int) -> list[int]",
     "splits an integer total into parts that differ by at most one, e.g. 10 into 3 parts as [4, 3, 3]", False),
    ("round_half_up(value: float, digits: int) -> float",
     "rounds half away from zero instead of Python's round-half-to-even, using the decimal module", True),
    ("format_duration(seconds: int) -> str",
     "formats a number of seconds as '2h 05m 09s', leaving out zero hours", False),
    ("parse_time_range(text: str) -> tuple[time, time]",
     "parses strings like '9:30-17:00' into two time objects", True),
    ("overlapping_meetings(meetings: list[tuple[int, int]]) -> bool",
     "tells whether any two meetings given as (start, end) minute pairs overlap", False),
    ("min_meeting_rooms(meetings: list[tuple[int, int]]) -> int",
     "returns how many rooms are needed so that no meetings overlap in the same room", True),
    ("schedule_tasks(tasks: dict[str, int], workers: int) -> int",
     "returns the time needed to finish independent tasks with given durations on a number of workers, always giving the longest remaining task to the next free worker", True),
    ("word_ladder_neighbors(word: str, dictionary: set[str]) -> list[str]",
     "returns the dictionary words that differ from word by exactly one letter", False),
    ("validate_password(password: str) -> list[str]",
     "returns a list of the rules a password breaks (length, digit, uppercase, symbol), empty if it is fine", False),
    ("mask_email(email: str) -> str",
     "masks an address like 'jonathan@example.com' as 'j******n@example.com'", False),
    ("parse_log_line(line: str) -> dict | None",
     "parses a line like '2024-05-01 12:00:03 ERROR db: timeout' into timestamp, level, source and message", True),
    ("tail(path: str, n: int) -> list[str]",
     "returns the last n lines of a text file without reading the whole file into memory", True),
    ("count_words_in_files(paths: list[str]) -> dict[str, int]",
     "returns the number of words in each file, skipping files that cannot be read", False),
    ("newest_file(folder: str, pattern: str) -> str | None",
     "returns the path of the most recently modified file matching a glob pattern, or None", True),
    ("safe_filename(name: str) -> str",
     "replaces characters that are not allowed in file names on Windows or Linux with underscores", True),
    ("json_lines_reader(path: str)",
     "yields one parsed object per line of a JSON Lines file and reports the line number of any bad line", True),
    ("write_csv_report(rows: list[dict], path: str) -> None",
     "writes dictionaries to a CSV file whose header is the union of all keys in first-seen order", True),
    ("retry_call(func, attempts: int, delay: float)",
     "calls func until it succeeds or the attempts run out, sleeping delay seconds and doubling it after each failure", True),
    ("rate_limited(calls: int, period: float)",
     "is a decorator that allows a function to run at most calls times per period seconds and sleeps otherwise", True),
    ("timed(func)",
     "is a decorator that logs how long each call of the wrapped function took", True),
    ("memoize(func)",
     "is a decorator that caches results by positional arguments, written by hand without functools", False),
    ("debounce(wait: float)",
     "is a decorator that only runs the function once calls have stopped for wait seconds, using threading.Timer", True),
    ("chunked_reader(stream, size: int)",
     "is a generator that yields fixed-size byte chunks from a binary stream until it is exhausted", False),
    ("unique_everseen(iterable, key=None)",
     "is a generator that yields items in order, skipping any already seen", False),
    ("window_pairs(iterable)",
     "is a generator yielding overlapping pairs (a, b), (b, c), ... from any iterable, without building a list", False),
    ("take_while_sum(nums: list[int], limit: int) -> list[int]",
     "returns the longest prefix of nums whose sum stays at or below limit", False),
    ("majority_element(nums: list[int]) -> int | None",
     "returns the value that appears more than half the time using the Boyer-Moore voting algorithm, or None", False),
    ("product_except_self(nums: list[int]) -> list[int]",
     "returns, for each position, the product of all other numbers without using division", False),
    ("trap_rain_water(heights: list[int]) -> int",
     "computes how much water is trapped between bars of the given heights", False),
    ("longest_substring_without_repeats(s: str) -> int",
     "returns the length of the longest substring with no repeated character using a sliding window", False),
    ("min_window_substring(s: str, t: str) -> str",
     "returns the shortest substring of s containing every character of t with multiplicity", True),
    ("valid_sudoku(board: list[list[str]]) -> bool",
     "checks whether a partially filled 9x9 Sudoku board breaks any row, column or box rule", False),
    ("solve_n_queens(n: int) -> int",
     "counts the ways to place n queens on an n x n board so that none attack each other", False),
    ("subsets(items: list) -> list[list]",
     "returns all subsets of a list of distinct items", False),
    ("combination_sum(candidates: list[int], target: int) -> list[list[int]]",
     "returns every combination of candidates, each usable any number of times, that adds up to target", False),
    ("dijkstra(graph: dict[str, dict[str, int]], start: str) -> dict[str, int]",
     "returns the shortest distance from start to every reachable node of a weighted graph", True),
    ("has_cycle(graph: dict[str, list[str]]) -> bool",
     "detects a cycle in a directed graph with depth-first search", False),
    ("connected_components(edges: list[tuple[int, int]]) -> list[set[int]]",
     "returns the connected components of an undirected graph given as an edge list", False),
    ("flood_fill(image: list[list[int]], row: int, col: int, color: int) -> list[list[int]]",
     "recolors the region connected to the start pixel, returning a new image", False),
    ("kth_largest(nums: list[int], k: int) -> int",
     "returns the k-th largest value using quickselect in expected linear time", True),
    ("is_rotation(a: str, b: str) -> bool",
     "checks whether b is a rotation of a, such as 'erbottlewat' of 'waterbottle'", False),
    ("compress_path(path: str) -> str",
     "simplifies a Unix path like '/a/./b/../../c/' to '/c'", False),
    ("evaluate_rpn(tokens: list[str]) -> float",
     "evaluates an expression in reverse Polish notation such as ['2', '1', '+', '3', '*']", False),
    ("tokenize_arithmetic(expr: str) -> list[str]",
     "splits an arithmetic expression like '12*(3+4.5)' into numbers, operators and parentheses", True),
    ("roman_numerals_valid(numeral: str) -> bool",
     "checks whether a string is a valid, canonical Roman numeral", True),
    ("number_to_words(n: int) -> str",
     "spells out an integer from 0 to 999,999 in English words", False),
    ("ordinal_suffix(n: int) -> str",
     "returns '1st', '2nd', '3rd', '11th', '22nd' and so on for any positive integer", False),
    ("leap_years_between(start: int, end: int) -> list[int]",
     "lists the leap years in an inclusive range of years", False),
    ("week_number(day: date) -> tuple[int, int]",
     "returns the ISO year and ISO week number of a date", True),
    ("month_calendar(year: int, month: int) -> list[list[int]]",
     "returns the weeks of a month as lists of day numbers, with 0 for days outside the month, weeks starting Monday", True),
    ("split_expenses(payments: dict[str, float]) -> list[tuple[str, str, float]]",
     "works out who should pay whom so that everyone ends up paying an equal share, with as few transfers as is easy", False),
    ("loan_schedule(principal: float, annual_rate: float, months: int) -> list[tuple[int, float, float, float]]",
     "returns a monthly amortization table of (month, interest, principal paid, remaining balance)", False),
    ("compound_growth(principal: float, rate: float, years: int, per_year: int) -> float",
     "returns the value of an investment with interest compounded per_year times a year", False),
    ("grade_letter(score: float) -> str",
     "maps a score from 0 to 100 to a letter grade A-F and raises ValueError outside that range", True),
    ("shopping_total(cart: list[tuple[str, int, float]], discounts: dict[str, float]) -> float",
     "sums (item, quantity, unit price) lines, applying a per-item percentage discount where one is given", False),
    ("inventory_reorder(stock: dict[str, int], minimum: dict[str, int]) -> list[str]",
     "returns the items whose stock has fallen below their minimum level, sorted by how far below they are", False),
    ("tally_votes(ballots: list[str]) -> tuple[str, int]",
     "returns the winner and their vote count, with ties broken alphabetically", True),
    ("instant_runoff(ballots: list[list[str]]) -> str",
     "finds the winner of a ranked-choice election by repeatedly eliminating the last-place candidate", True),
    ("elo_update(rating_a: float, rating_b: float, score_a: float, k: float = 32) -> tuple[float, float]",
     "returns both players' new Elo ratings after a game", False),
    ("game_of_life_step(board: set[tuple[int, int]]) -> set[tuple[int, int]]",
     "advances Conway's Game of Life one generation on an unbounded board of live cells", True),
    ("tic_tac_toe_winner(board: list[str]) -> str | None",
     "returns 'X' or 'O' if that player has three in a row on a board given as three strings, else None", False),
    ("shuffle_deck(seed: int) -> list[str]",
     "returns a shuffled 52-card deck with card names like 'QH', reproducible from the seed", True),
    ("dice_distribution(dice: int, sides: int) -> dict[int, float]",
     "returns the exact probability of every total when rolling several fair dice", True),
    ("monte_carlo_pi(samples: int, seed: int) -> float",
     "estimates pi by sampling random points in the unit square", True),
    ("random_password(length: int) -> str",
     "generates a password with at least one lowercase letter, uppercase letter, digit and symbol using the secrets module", True),
    ("bits_set(n: int) -> int",
     "counts the 1 bits of a non-negative integer without converting it to a string", False),
    ("reverse_bits(n: int, width: int = 8) -> int",
     "reverses the order of the lowest width bits of n", False),
    ("gray_code(n: int) -> list[int]",
     "returns the n-bit Gray code sequence", False),
    ("checksum_mod97(iban: str) -> bool",
     "validates an IBAN with the mod-97 check after moving the first four characters to the end", False),
    ("isbn10_valid(isbn: str) -> bool",
     "validates an ISBN-10, where the last character may be 'X', ignoring hyphens", False),
    ("ascii_table(rows: list[list[str]]) -> str",
     "renders rows as a text table with columns padded to their widest cell and a separator line under the header", False),
    ("progress_bar(done: int, total: int, width: int = 20) -> str",
     "returns a text progress bar like '[######--------------]  30%'", False),
    ("sparkline(values: list[float]) -> str",
     "renders numbers as a one-line sparkline using the block characters ▁▂▃▄▅▆▇█", False),
]

_MORE_FUNC_TASKS = [
    "Write a Python function `{sig}` that {desc}.",
    "Write `{sig}`, which {desc}. Then write pytest tests that cover normal input and at least two edge cases.",
    "Implement `{sig}`: it {desc}. Explain the time and space complexity of your solution.",
    "Specification: `{sig}` {desc}. Write it with full type hints, a Google-style docstring, and a clear exception "
    "for invalid input.",
    "Write `{name}`, which {desc}, first as a plain loop and then in a more idiomatic style. Which version would "
    "you keep in production code, and why?",
]

# Data structures: (name, what it is, the operations to implement).
_STRUCTURES = [
    ("singly linked list", "a chain of nodes each holding a value and a next pointer", "append, prepend, find, remove the first match, and reverse in place"),
    ("doubly linked list", "nodes with prev and next pointers and a sentinel head", "insert after a node, remove a node in O(1), and iterate in both directions"),
    ("binary search tree", "an unbalanced BST of integer keys", "insert, contains, in-order traversal, and delete a key with two children"),
    ("min-heap", "a binary heap stored in a Python list", "push, pop the smallest item, peek, and heapify an existing list"),
    ("trie", "a prefix tree of lowercase words", "insert a word, check a whole word, list every word with a given prefix, and delete a word"),
    ("union-find", "a disjoint-set forest with path compression and union by rank", "find, union, and count the number of sets"),
    ("circular buffer", "a fixed-capacity ring buffer that overwrites the oldest item when full", "append, read the items oldest first, and report whether it is full"),
    ("LRU cache", "a cache with a fixed capacity that evicts the least recently used key", "get and put in O(1) using a dict and a doubly linked list"),
    ("sparse matrix", "a matrix that stores only non-zero entries in a dict keyed by (row, col)", "get, set, add two matrices, and multiply by a vector"),
    ("interval tree", "a structure holding closed intervals", "add an interval and return every interval that contains a point"),
    ("bloom filter", "a probabilistic set backed by a bit array and k hash functions", "add, might_contain, and an estimate of the false positive rate"),
    ("priority queue with updates", "a heap-based queue whose priorities can change", "push, pop the highest priority, and change the priority of an existing item using lazy deletion"),
    ("graph with adjacency lists", "an undirected, weighted graph", "add nodes and edges, remove an edge, list neighbors, and run breadth-first search"),
    ("deque built from scratch", "a double-ended queue implemented with a fixed-size array that grows when full", "push and pop at both ends in amortized O(1)"),
    ("skip list", "a probabilistic ordered list with express lanes", "insert, search, and delete with expected O(log n) time"),
    ("segment tree", "a tree over an array of numbers for range queries", "build, update one element, and query the sum of a range"),
    ("Fenwick tree", "a binary indexed tree over counts", "add to a position and return a prefix sum"),
    ("ordered set", "a set that remembers insertion order", "add, discard, membership, and iteration in insertion order"),
    ("multiset", "a bag that counts how many times each value was added", "add, remove one copy, count, and iterate over all copies"),
    ("two-way dictionary", "a mapping that can be looked up by key or by value", "set, get by key, get by value, and delete while keeping both directions consistent"),
    ("time-based key-value store", "a store that keeps every version of a value with its timestamp", "set(key, value, t) and get(key, t) returning the latest value at or before t"),
    ("rope for text editing", "a binary tree of string pieces for long texts", "concatenate, index a character, and split at a position"),
    ("stack with minimum", "a stack that can report its minimum element", "push, pop, top, and get_min, all in O(1)"),
    ("sorted list", "a list kept sorted with the bisect module", "add, remove, count of values in a range, and index of a value"),
    ("quadtree", "a tree that stores 2D points by splitting squares into four", "insert a point and find every point inside a query rectangle"),
]

_STRUCTURE_TASKS = [
    "Implement a {name} in Python: {what}. Support {ops}.",
    "Write a {name} class ({what}) and explain the time complexity of each operation: {ops}.",
    "I am learning data structures. Build a small {name} in Python ({what}) that can {ops}, and add a short "
    "example of using it.",
    "Write pytest tests for a {name} ({what}) whose methods {ops}. Include the edge cases you would worry about most.",
    "When would I use a {name} instead of Python's built-in list, dict or set? Sketch the class for {what} that "
    "can {ops}.",
]

# Library tasks, one group per library.
_LIBRARY_TASKS = {
    "pandas": [
        "With pandas, read sales.csv, parse the 'date' column as dates, and compute total revenue per month.",
        "I have a pandas DataFrame with columns city, year and population. How do I pivot it so each city is a row and each year a column?",
        "How do I merge two pandas DataFrames on customer_id so that customers without orders are kept? Show how to spot the unmatched rows.",
        "In pandas, how do I fill missing values in a 'price' column with the median price of the same category?",
        "Show how to use groupby with agg in pandas to get the count, mean and max of 'duration' per 'user'.",
        "My pandas code gives SettingWithCopyWarning when I filter a DataFrame and then assign to a column. What does it mean and how do I fix it?",
        "How do I compute a 7-day rolling average of daily visits in pandas, indexed by date, when some days are missing?",
        "In pandas, how do I split a 'full_name' column into 'first' and 'last' columns?",
        "How do I remove duplicate rows in pandas based on two columns, keeping the most recent by a timestamp column?",
        "What is the difference between loc and iloc in pandas? Show a small example where they return different rows.",
        "How do I apply a function to every row of a pandas DataFrame, and why is a vectorized expression usually faster?",
        "How do I read a 5 GB CSV with pandas on a laptop with 8 GB of RAM? Show the chunked approach and the dtype tricks.",
        "Using pandas, bin ages into the groups 0-17, 18-34, 35-64 and 65+ and count people in each group.",
    ],
    "numpy": [
        "With NumPy, normalize each row of a 2D array so that the rows sum to 1.",
        "Explain NumPy broadcasting with an example that subtracts the column means from a matrix.",
        "How do I find the indices of the three largest values in a NumPy array without sorting the whole array?",
        "Replace every negative value in a NumPy array with 0 using a boolean mask, without a loop.",
        "How do I compute the pairwise Euclidean distances between two sets of points with NumPy and no Python loops?",
        "What is the difference between a NumPy view and a copy? Show a case where changing a slice changes the original.",
        "Use NumPy to solve the linear system 3x + 2y = 7, x - y = 1.",
        "How do I stack a list of 1D NumPy arrays of equal length into a 2D array, as rows and as columns?",
        "Generate reproducible random numbers with NumPy's Generator API and explain why it is preferred over np.random.seed.",
        "How can I count how many times each integer appears in a NumPy array?",
        "Why does 0.1 * 3 == 0.3 fail for NumPy arrays too, and how do I compare floats with np.isclose?",
    ],
    "requests": [
        "Using the requests library, fetch JSON from an API with a 5-second timeout and handle HTTP errors cleanly.",
        "How do I send a POST request with a JSON body and a bearer token using requests?",
        "How do I download a large file with requests without loading it all into memory?",
        "How do I retry failed requests automatically with requests and urllib3's Retry?",
        "How do I follow pagination links in an API that returns a 'next' URL in each JSON response, using requests?",
        "What does a requests.Session give me over calling requests.get each time?",
        "How do I upload a file with a multipart form using requests?",
        "Show how to call a REST API concurrently for 100 ids with httpx and asyncio, limiting to 10 requests at a time.",
    ],
    "datetime": [
        "How do I convert a UTC datetime to 'America/New_York' local time with zoneinfo?",
        "How do I get the first and last day of the current month with the datetime module?",
        "How many full weeks and leftover days are there between two dates? Show the datetime code.",
        "Parse ISO 8601 strings such as '2024-03-10T14:05:00+02:00' into aware datetimes in Python.",
        "How do I add one month to a date in Python when the next month is shorter, like January 31?",
        "Round a datetime down to the nearest 15 minutes in Python.",
        "How do I get a Unix timestamp from a datetime and back, without time zone mistakes?",
        "Why does subtracting two datetimes across a daylight-saving change give a surprising result, and how do I handle it?",
    ],
    "json": [
        "How do I read a JSON file with nested objects and print every key path with its value?",
        "Write a custom json.JSONEncoder that serializes dataclasses, sets and Decimals.",
        "How do I load JSON so that numbers with decimals become Decimal objects instead of floats?",
        "What is the difference between json.load, json.loads, json.dump and json.dumps?",
        "How do I write a list of records as JSON Lines and read it back one record at a time?",
        "Validate that a JSON object has the keys 'id' (int) and 'email' (str) without any third-party library.",
        "Why does json.dumps turn my tuple into a list and my int keys into strings?",
    ],
    "argparse": [
        "Write an argparse CLI with two subcommands, 'add' and 'list', where 'add' takes a required title and an optional --due date.",
        "How do I make an argparse option accept several values, like --tags a b c?",
        "How can argparse enforce that --start and --end are given together, or not at all?",
        "Write an argparse script whose --level option only accepts 'debug', 'info' or 'warning', with 'info' as the default.",
        "How do I read a config file's values as defaults and let argparse command-line options override them?",
        "Add a --version flag and a custom epilog with examples to an argparse parser.",
    ],
    "logging": [
        "Configure logging so INFO goes to the console and DEBUG and above goes to a rotating file of 1 MB with 3 backups.",
        "Why do my log messages appear twice after I add a handler to a module logger?",
        "How do I include the function name and line number in every log message?",
        "Why is logger.info('value: %s', x) better than logger.info(f'value: {x}')?",
        "How do I log an exception with its traceback from inside an except block?",
        "How do I write logs as JSON lines with the standard logging module only?",
        "Set up per-module loggers in a package so that a library does not print anything unless the application configures logging.",
    ],
    "asyncio": [
        "Write an asyncio producer-consumer example with an asyncio.Queue, one producer and three consumers.",
        "How do I run a blocking function such as a slow file hash inside an asyncio program without freezing the event loop?",
        "How do I limit an asyncio program to at most 5 concurrent tasks with a Semaphore?",
        "What happens to other tasks when one task in asyncio.gather raises, and how does return_exceptions change that?",
        "How do I cancel an asyncio task cleanly and run cleanup code when it is cancelled?",
        "Write an async context manager that opens and closes a fake database connection.",
        "How do TaskGroups in Python 3.11 differ from asyncio.gather?",
        "Write an async generator that yields numbers every half second and consume it with async for.",
    ],
    "threading": [
        "Two threads increment a shared counter a million times each and the result is wrong. Explain why and fix it with a Lock.",
        "Write a thread-safe queue-based worker pool with threading and queue.Queue that processes jobs and stops cleanly.",
        "What is the difference between ThreadPoolExecutor and ProcessPoolExecutor, and which should I use to resize 1,000 images?",
        "How do I stop a background thread cleanly using threading.Event?",
        "What is a deadlock? Write a small two-lock example that can deadlock and then fix it.",
        "How do I collect results from ThreadPoolExecutor as they finish rather than in submission order?",
        "Use multiprocessing.Pool to compute the sum of squares of numbers in parallel and explain why the code needs if __name__ == '__main__'.",
        "How do I share a large read-only NumPy array between worker processes without copying it for each one?",
    ],
    "subprocess": [
        "Run a command with subprocess, capture stdout and stderr separately, and raise if the exit code is not 0.",
        "Why is passing a command string with shell=True dangerous, and how do I pass arguments safely as a list?",
        "How do I stream the output of a long-running subprocess line by line as it runs?",
        "How do I run a subprocess with a timeout and kill it if it takes too long?",
        "How do I pipe the output of one command into another with subprocess, like 'ps aux | grep python'?",
    ],
    "files": [
        "Copy a whole directory tree with shutil, skipping files that end in .tmp.",
        "Write a script that renames every .jpeg file in a folder to .jpg, and show what it would do first with a dry-run flag.",
        "How do I zip a folder with the zipfile module, keeping relative paths inside the archive?",
        "How do I find all files larger than 100 MB under my home directory with pathlib?",
        "How do I read a file in reverse, last line first, without loading the whole file?",
        "Watch a folder for new files and process each one once, using only the standard library (polling is fine).",
        "How do I check free disk space and a file's last modification time in Python?",
        "Extract only the .csv files from a .tar.gz archive into a target folder, safely.",
    ],
    "collections": [
        "Use collections.ChainMap to look up settings from command-line options, then environment, then defaults.",
        "Show three useful Counter operations: most_common, subtraction, and adding two Counters.",
        "How does defaultdict(int) differ from dict.setdefault, and when do I prefer each?",
        "Build a word-to-line-numbers index for a text with defaultdict(set).",
        "Use a deque with maxlen to keep the last 5 lines read from a file.",
        "How do I make a namedtuple with default values, and when should I use a dataclass instead?",
    ],
    "itertools": [
        "Use itertools.islice to take the first 10 items of an infinite generator.",
        "Show itertools.pairwise and itertools.accumulate on a list of daily balances.",
        "How do I group consecutive equal characters in 'aaabccdd' with itertools.groupby?",
        "Use itertools.zip_longest to combine two lists of different lengths, filling with '-'.",
        "How do I batch an iterable into tuples of 3 with itertools (including itertools.batched on Python 3.12)?",
        "Generate all 3-letter lowercase codes with itertools.product without building a huge list first.",
        "How can itertools.count and itertools.cycle help when assigning round-robin ids to workers?",
    ],
    "functools": [
        "What does functools.partial do? Use it to make a 'power of two' function from pow.",
        "Explain functools.cached_property with a class that computes an expensive statistic once.",
        "Use functools.singledispatch to format ints, floats and lists differently.",
        "How does functools.total_ordering save work when making a class sortable?",
        "What is the maxsize argument of functools.lru_cache, and how do I inspect and clear the cache?",
    ],
    "pytest": [
        "How do I use pytest.mark.parametrize to test a function with five input/output pairs?",
        "Write a pytest fixture that creates a temporary SQLite database with one table and removes it afterwards.",
        "How do I test that a function raises ValueError with a specific message in pytest?",
        "How do I use the tmp_path fixture to test a function that writes a file?",
        "How do I use monkeypatch in pytest to fake an environment variable and the current time?",
        "What is the difference between fixture scopes function, module and session in pytest?",
        "How do I skip a test on Windows and mark another as expected to fail in pytest?",
        "How do I measure test coverage with pytest-cov and find which lines are not tested?",
        "Write a pytest test for a function that prints to stdout, using capsys.",
        "How do I share fixtures between several test files with conftest.py?",
    ],
    "mock": [
        "How do I mock requests.get in a unit test so no real HTTP call is made, and check that it was called with the right URL?",
        "What is the difference between patching 'module.function' where it is defined and where it is used?",
        "Use unittest.mock.MagicMock to fake a database client whose query method returns different values on each call.",
        "How do I assert that a mocked function was called exactly twice with specific arguments?",
        "How do I mock open() to test a function that reads a config file?",
        "How do I freeze time in a test of code that calls datetime.now()?",
    ],
    "sqlite3": [
        "Use sqlite3 with parameter placeholders to insert 1,000 rows efficiently with executemany.",
        "How do I get rows from sqlite3 as dictionaries instead of tuples?",
        "How do I use a sqlite3 connection as a context manager, and does it close the connection?",
        "Write a tiny migration system with sqlite3 that applies numbered .sql files once each.",
        "How do I store and read datetimes in SQLite from Python without losing the time zone?",
    ],
    "matplotlib": [
        "Plot two lines, actual and forecast, over dates with matplotlib, with a legend and rotated date labels.",
        "How do I make a figure with a 2x2 grid of subplots that share the x axis in matplotlib?",
        "Draw a histogram of 1,000 normal random values with matplotlib and overlay the mean as a vertical line.",
        "How do I save a matplotlib figure as a high-resolution PNG without the labels being cut off?",
        "Make a horizontal bar chart of the top 10 categories by count with matplotlib, largest at the top.",
        "Create a scatter plot with point colors from a third variable and a colorbar in matplotlib.",
    ],
    "web": [
        "Write a minimal Flask app with a JSON endpoint /items that supports GET and POST with an in-memory list.",
        "Write a FastAPI endpoint that accepts a JSON body validated by a Pydantic model and returns 422 on bad input.",
        "How do I add a path parameter and an optional query parameter to a FastAPI route?",
        "How do I serve static files and an HTML template from Flask?",
        "Write Flask middleware, or a before_request hook, that rejects requests without a valid API key header.",
        "How do I run background work after returning a response in FastAPI?",
        "How do I write tests for a FastAPI app with TestClient?",
        "Explain what WSGI and ASGI are and why FastAPI needs an ASGI server like uvicorn.",
    ],
    "pydantic": [
        "Define a Pydantic model for a user with an email, an age between 0 and 130, and an optional list of tags.",
        "How do I add a custom validator in Pydantic v2 that strips whitespace and lowercases a username?",
        "How do I load settings from environment variables with pydantic-settings, with defaults?",
        "How do I serialize a Pydantic model to JSON while excluding None values and renaming a field?",
        "What changed between Pydantic v1 and v2 that most often breaks old code?",
    ],
    "sqlalchemy": [
        "Define two SQLAlchemy 2.0 ORM models, Author and Book, with a one-to-many relationship.",
        "How do I query with SQLAlchemy 2.0 select() for books published after 2020, ordered by title?",
        "What is the N+1 problem in SQLAlchemy, and how do selectinload and joinedload fix it?",
        "How do I use a SQLAlchemy session safely in a web request, committing on success and rolling back on error?",
        "How do Alembic migrations work with SQLAlchemy models? Walk through adding a column.",
    ],
    "scraping": [
        "Use BeautifulSoup to extract every link's text and href from an HTML page.",
        "Parse an HTML table into a list of dictionaries using BeautifulSoup, using the header row as keys.",
        "How do I scrape politely: respecting robots.txt, adding delays, and setting a User-Agent?",
        "Use the standard library's html.parser to count how many <img> tags a page has.",
        "Parse an RSS feed with xml.etree.ElementTree and print each item's title and date.",
    ],
    "excel": [
        "Read the second sheet of an Excel file with openpyxl and print each row's values.",
        "Write a list of dictionaries to an .xlsx file with openpyxl, with a bold header and auto-sized columns.",
        "How do I read an Excel file with several sheets into a dict of pandas DataFrames?",
        "How do I add a formula cell and a number format for currency with openpyxl?",
    ],
    "images": [
        "Use Pillow to make 200x200 thumbnails of every .jpg in a folder, keeping the aspect ratio.",
        "How do I convert a PNG with transparency to a JPEG with a white background using Pillow?",
        "Read an image's EXIF date taken with Pillow, and handle images that have no EXIF data.",
        "Draw text with a custom font onto an image with Pillow's ImageDraw.",
    ],
    "numbers": [
        "Why does Decimal('0.1') behave differently from Decimal(0.1)? Show how to do exact money arithmetic.",
        "Use the fractions module to add 1/3 and 1/6 exactly and print the result.",
        "How do I round a Decimal to 2 places using ROUND_HALF_UP?",
        "How do I format numbers with thousands separators and a fixed number of decimals in f-strings?",
        "Show f-string formatting for percentages, zero-padded integers, and right-aligned columns.",
        "How do I convert between integers and bytes with int.to_bytes and int.from_bytes?",
        "Use the struct module to pack a header of two unsigned shorts and a float, and unpack it again.",
    ],
    "security": [
        "How do I hash a password with hashlib.scrypt and a random salt, and verify it later?",
        "Use hmac to sign a message and verify the signature in constant time.",
        "Why should I use the secrets module instead of random for tokens?",
        "How do I encrypt and decrypt a string with the cryptography package's Fernet?",
        "How do I avoid leaking secrets like API keys in logs and tracebacks in a Python app?",
    ],
    "networking": [
        "Write a tiny TCP echo server and client with the socket module.",
        "Write a UDP sender and receiver in Python and explain what happens to lost packets.",
        "How do I send an email with an attachment using smtplib and email.message.EmailMessage?",
        "How do I serve the current directory over HTTP with one command, and what is it good for?",
        "Parse a URL into scheme, host, path and query parameters with urllib.parse.",
    ],
    "gui-cli": [
        "Write a small tkinter window with a text entry, a button, and a label that shows the entered text reversed.",
        "Make a command-line tool with click that has a --count option and a NAME argument.",
        "Print a colored progress bar for a loop with the rich library, and the same without any library.",
        "How do I read a password from the terminal without echoing it?",
        "Write a simple interactive menu loop in the terminal that handles invalid choices and Ctrl+C gracefully.",
    ],
}

# Bug patterns shown in code about different records: (pattern, leads, code). Placeholders from a context:
# items, item, field (a numeric key), key (a text key), Item (the item capitalized).
_BUG_PATTERNS = [
    ("mutable-default",
     ["This function should start an empty list on every call, but {items} from earlier calls keep showing up. Why?",
      "Each call of this function returns more {items} than I passed in. What is the bug?"],
     "def collect_{items}(new_{item}, {items}=[]):\n    {items}.append(new_{item})\n    return {items}"),
    ("remove-while-iterating",
     ["I want to drop every {item} with a negative {field}, but some negative ones survive. What is going on?",
      "Why does this loop skip some {items} when it removes others, and what is a safe way to filter them?"],
     "for {item} in {items}:\n    if {item}['{field}'] < 0:\n        {items}.remove({item})"),
    ("off-by-one",
     ["The total {field} printed here is always a little too small. Find the bug.",
      "Why does this loop miss one of the {items}?"],
     "total = 0\nfor i in range(1, len({items})):\n    total += {items}[i]['{field}']\nprint(total)"),
    ("floor-division",
     ["The average {field} comes out as a whole number even when it should not. Why?",
      "Why is this average of {field} slightly wrong, and sometimes off by almost one?"],
     "average = sum({item}['{field}'] for {item} in {items}) // len({items})"),
    ("shadowed-builtin",
     ["Further down the script I get TypeError: 'int' object is not callable on the last line. Why?",
      "Why does calling max() fail at the end of this code?"],
     "max = 0\nfor {item} in {items}:\n    if {item}['{field}'] > max:\n        max = {item}['{field}']\n"
     "largest = max({items}, key=lambda {item}: {item}['{field}'])"),
    ("missing-return",
     ["This fails with TypeError: unsupported operand type(s) for +: 'NoneType' and 'int'. Why?",
      "Why does the function below give back None?"],
     "def total_{field}({items}):\n    result = 0\n    for {item} in {items}:\n        result += {item}['{field}']\n\n"
     "print(total_{field}({items}) + 10)"),
    ("counting-keyerror",
     ["This raises KeyError on the very first {item}. How should I count {items} per {key}?",
      "What is wrong with this way of counting {items} by {key}? Show two correct versions."],
     "counts = {{}}\nfor {item} in {items}:\n    counts[{item}['{key}']] += 1"),
    ("sort-returns-none",
     ["Why does this fail with TypeError: 'NoneType' object is not subscriptable?",
      "I expected the {item} with the smallest {field}, but I get an error instead. Why?"],
     "ranked = {items}.sort(key=lambda {item}: {item}['{field}'])\nprint(ranked[0])"),
    ("aliasing",
     ["I kept a backup of my {items} before clearing the list, but the backup is empty too. Why, and how do I copy "
      "properly?",
      "Why does clearing {items} also empty backup?"],
     "backup = {items}\n{items}.clear()\nprint(len(backup))"),
    ("str-plus-number",
     ["This raises TypeError: can only concatenate str (not \"int\") to str. Fix it in two different ways.",
      "How do I print this total of {field} without a TypeError?"],
     "print('Total {field}: ' + sum({item}['{field}'] for {item} in {items}))"),
    ("exhausted-generator",
     ["The loop at the end never prints anything. Why?",
      "Why is the second pass over big_{items} empty?"],
     "big_{items} = ({item} for {item} in {items} if {item}['{field}'] > 10)\nprint(len(list(big_{items})))\n"
     "for {item} in big_{items}:\n    print({item}['{key}'])"),
    ("late-binding",
     ["All three checks act as if the limit were 30. Why, and how do I capture each limit?",
      "Why do these lambdas all use the same limit?"],
     "checks = []\nfor limit in (10, 20, 30):\n    checks.append(lambda {item}: {item}['{field}'] > limit)\n"
     "print([check({items}[0]) for check in checks])"),
    ("is-literal",
     ["Python warns 'SyntaxWarning: \"is\" with a literal' here, and the check sometimes fails. Why?",
      "Why should this comparison use == instead of is?"],
     "for {item} in {items}:\n    if {item}['{key}'] is 'unknown':\n        print('missing {key}')"),
    ("unbound-local",
     ["Calling tally raises UnboundLocalError. Why, and what are the cleaner alternatives to a global counter?",
      "Why can't this function update the counter defined above it?"],
     "count = 0\n\ndef tally({item}):\n    if {item}['{field}'] > 0:\n        count += 1"),
    ("shared-class-attribute",
     ["Two {Item}Batch objects end up sharing the same {items}. Why?",
      "Adding to one {Item}Batch also adds to every other one. What did I do wrong?"],
     "class {Item}Batch:\n    {items} = []\n\n    def add(self, {item}):\n        self.{items}.append({item})"),
    ("bare-except",
     ["Why is this except clause a bad idea, and what should it catch instead?",
      "This silently turns bad {field} values into 0 and also swallows Ctrl+C. How should it be written?"],
     "for {item} in {items}:\n    try:\n        value = float({item}['{field}'])\n    except:\n        value = 0"),
    ("early-return-in-loop",
     ["This returns False even when a later {item} has a large {field}. Why?",
      "Why does this only ever look at the first {item}?"],
     "def has_large({items}):\n    for {item} in {items}:\n        if {item}['{field}'] > 100:\n            return True\n"
     "        else:\n            return False"),
    ("unused-string-result",
     ["The {key} values still have spaces and capitals after this loop. Why?",
      "Why does this cleanup of {key} have no effect?"],
     "for {item} in {items}:\n    {item}['{key}'].strip().lower()"),
    ("string-numbers",
     ["The largest {field} this finds is wrong: '9' beats '100'. Why, and how do I fix it?",
      "Why does max() pick the wrong row from this CSV?"],
     "import csv\n\nwith open('{items}.csv', newline='') as f:\n    rows = list(csv.DictReader(f))\n"
     "top = max(rows, key=lambda row: row['{field}'])"),
]

_BUG_CONTEXTS = [
    dict(items="orders", item="order", field="total", key="customer"),
    dict(items="readings", item="reading", field="celsius", key="sensor"),
    dict(items="students", item="student", field="score", key="class_name"),
    dict(items="expenses", item="expense", field="amount", key="category"),
    dict(items="tracks", item="track", field="seconds", key="artist"),
    dict(items="tasks", item="task", field="hours", key="owner"),
    dict(items="parcels", item="parcel", field="weight_kg", key="city"),
    dict(items="runs", item="run", field="km", key="runner"),
    dict(items="invoices", item="invoice", field="due", key="client"),
    dict(items="listings", item="listing", field="price", key="district"),
]

# Records and operations on them: the operation's prompts share a group.
_RECORDS = [
    ("sale", "{'date': '2024-03-02', 'store': 'Oslo', 'product': 'kettle', 'units': 3, 'price': 24.5}"),
    ("employee", "{'id': 17, 'name': 'Ana Ruiz', 'team': 'data', 'salary': 61000, 'start': '2021-09-01'}"),
    ("library loan", "{'isbn': '9780141439518', 'member': 'M-204', 'out': '2024-01-10', 'back': None}"),
    ("weather observation", "{'station': 'KSEA', 'time': '2024-07-01T14:00', 'temp_c': 23.1, 'wind_kph': 12}"),
    ("support ticket", "{'ticket': 'T-881', 'opened': '2024-02-11', 'priority': 'high', 'agent': 'lee', 'closed': '2024-02-12'}"),
    ("flight leg", "{'flight': 'LH400', 'from': 'FRA', 'to': 'JFK', 'dep': '10:35', 'delay_min': 18}"),
    ("workout log", "{'user': 'kim', 'day': '2024-05-06', 'activity': 'run', 'minutes': 42, 'calories': 410}"),
    ("product review", "{'sku': 'B-220', 'stars': 4, 'text': 'Sturdy but loud', 'verified': True}"),
    ("bank transaction", "{'account': 'CH93-0076', 'booked': '2024-04-30', 'amount': -52.1, 'memo': 'groceries'}"),
    ("course grade", "{'student': 's-1021', 'course': 'CS101', 'term': '2023F', 'grade': 87}"),
    ("server request", "{'ts': 1714557601, 'path': '/api/items', 'status': 200, 'ms': 35, 'ip': '10.0.0.8'}"),
    ("recipe ingredient", "{'recipe': 'pancakes', 'ingredient': 'flour', 'grams': 200, 'optional': False}"),
]

_RECORD_OPS = [
    "I have a list of {what} records like {example}. Write Python code that groups them by one text field of your "
    "choice and sums a numeric field per group, without pandas.",
    "Given a list of {what} records such as {example}, write a function that returns the records from the last "
    "30 days, parsing the dates properly.",
    "My {what} data is a list of dicts like {example}. Write code that finds the top 5 by a numeric field and "
    "prints them as an aligned text table.",
    "Given {what} records like {example}, write a validation function that returns a list of problems per record "
    "(missing keys, wrong types, impossible values).",
    "Write code that writes a list of {what} records like {example} to a CSV file and reads it back with the "
    "right types.",
    "I receive {what} records like {example} from two sources and some appear in both. Write code that merges "
    "the two lists, removing duplicates by a sensible key.",
    "Using {what} records like {example}, compute each record's share of the total for a numeric field, as a "
    "percentage with one decimal.",
    "Turn a list of {what} records like {example} into a dict of dataclass instances keyed by their id-like "
    "field. Define the dataclass too.",
    "Sort a list of {what} records like {example} by two keys, one descending and one ascending, in a single "
    "sorted() call.",
    "Write a generator that reads {what} records like {example} from a JSON Lines file and yields only the valid "
    "ones, logging the line numbers of bad lines.",
    "Given {what} records like {example}, build a simple text histogram of one numeric field in 5 equal-width "
    "bins.",
    "How would I load {what} records like {example} into pandas and get the same per-group summary in one line? "
    "Compare it with a plain-Python version.",
    "Write type hints for a list of {what} records like {example} using TypedDict, and a function that filters "
    "them by a field value.",
    "Write a function that compares yesterday's and today's lists of {what} records like {example} and reports "
    "what was added, removed and changed.",
    "Write a small command-line script that reads {what} records like {example} from a JSON file and prints "
    "summary statistics for every numeric field.",
]

_MORE_EXPLAIN_SNIPPETS = [
    "print([x for x in range(10) if x % 3 == 0][::-1])",
    "a, b = 1, 2\na, b = b, a + b\nprint(a, b)",
    "d = {'x': 1}\nprint(d.get('y', 0), d.setdefault('y', 5), d)",
    "s = {3, 1, 2}\ns.add(2)\nprint(len(s), 2 in s, sorted(s))",
    "nums = [1, 2, 3]\nprint(nums * 2, [n * 2 for n in nums])",
    "print(bool(''), bool(' '), bool(0.0), bool([[]]))",
    "print(type(1 / 2), type(4 // 2), 7 % -3)",
    "x = [1, 2, 3]\ny = x[:]\ny.append(4)\nprint(x, y)",
    "print('a' < 'B', 'apple' < 'apricot', [1, 2] < [1, 3])",
    "def f(x, items=None):\n    items = items or []\n    items.append(x)\n    return items\n\nprint(f(1), f(2))",
    "words = 'the quick brown fox'.split()\nprint(max(words, key=len), min(words))",
    "print(list(map(int, '1 2 3'.split())), list(filter(None, [0, 1, '', 'a'])))",
    "i = 10\nwhile i > 0:\n    i -= 3\nelse:\n    print('done', i)",
    "for n in range(3):\n    if n == 5:\n        break\nelse:\n    print('no break')",
    "print(round(2.5), round(3.5), round(-0.5))",
    "print(int('0x1f', 16), int('101', 2), hex(255), bin(5))",
    "import math\nprint(math.floor(-2.5), math.ceil(-2.5), int(-2.5))",
    "print(len('héllo'), len('héllo'.encode('utf-8')))",
    "x = 'abc'\nprint(x.upper(), x)\nprint(x.replace('b', ''), x.find('z'))",
    "nested = [[1, 2], [3, 4]]\nflat = [v for row in nested for v in row]\nprint(flat, sum(nested, []))",
    "print(sorted([3, 1, 2], reverse=True), sorted('bca'), sorted({'b': 1, 'a': 2}))",
    "from collections import Counter\nc = Counter('mississippi')\nprint(c.most_common(2))",
    "class P:\n    def __init__(self, n):\n        self.n = n\n    def __eq__(self, o):\n        return self.n == o.n\n\nprint(P(1) == P(1), P(1) is P(1))",
    "def outer():\n    x = 1\n    def inner():\n        nonlocal x\n        x += 1\n        return x\n    return inner\n\nf = outer()\nprint(f(), f())",
    "import itertools\nprint(list(itertools.combinations([1, 2, 3], 2)))",
    "g = (n * n for n in range(4))\nprint(next(g), next(g), list(g))",
    "print(*range(3), sep=', ', end='!\\n')",
    "t = 1, \nprint(type(t), len(t), t * 3)",
    "a = [0] * 3\nb = [[0] * 2 for _ in range(2)]\nb[0][0] = 1\nprint(a, b)",
    "print('{:>6}|{:<6}|{:^6}'.format('ab', 'cd', 'ef'))",
    "print(f'{3.14159:.2f} {42:05d} {0.256:.0%} {1234567:,}')",
    "d = dict(zip('abc', range(3)))\nprint(d, {v: k for k, v in d.items()})",
    "def deco(f):\n    def w(*a):\n        return f(*a) * 2\n    return w\n\n@deco\ndef add(a, b):\n    return a + b\n\nprint(add(2, 3))",
    "x = None\nprint(x or 'default', x and 'never', 0 or '' or [])",
    "print(list(enumerate('ab', 1)), list(reversed(range(3))))",
    "print(all(n > 0 for n in [1, 2, -1]), any(n > 1 for n in [0, 1]))",
    "print(3 * 'ab', 'ab' * 0, ['x'] * 2)",
    "s = 'Hello World'\nprint(s.swapcase(), s.title(), s.count('o'), s.startswith('He'))",
    "print(isinstance(True, int), True + True, type(True))",
    "x = [3, 1, 2]\nprint(x.index(2), x.pop(), x)",
    "from dataclasses import dataclass\n\n@dataclass\nclass Pt:\n    x: int\n    y: int = 0\n\nprint(Pt(1), Pt(1) == Pt(1, 0))",
    "data = {'b': 2, 'a': 1}\nfor k in sorted(data, key=data.get, reverse=True):\n    print(k)",
    "print(str(1_000_000), 10 ** -2, 2 ** 0.5 == 2 ** (1 / 2))",
    "try:\n    print(1 / 0)\nexcept ZeroDivisionError as e:\n    print('error:', e)\nfinally:\n    print('cleanup')",
    "def f():\n    try:\n        return 'try'\n    finally:\n        print('finally runs')\n\nprint(f())",
]

_SCRIPTS = [
    "Write a Python script that renames photos in a folder to their date taken, like 2024-05-01_001.jpg, falling back to the file's modification date.",
    "Write a script that reads a CSV of expenses and prints a monthly summary per category, sorted by total.",
    "Write a command-line to-do list in Python that stores tasks in a JSON file and supports add, done and list.",
    "Write a script that checks a list of URLs from a text file and reports which ones return an error status.",
    "Write a Python script that finds duplicate files in a folder tree by content and prints the groups.",
    "Write a script that converts every Markdown heading in a file into a table of contents with links.",
    "Write a number-guessing game in Python where the computer picks a number from 1 to 100 and gives 'higher'/'lower' hints.",
    "Write a Python script that counts the lines of code per file extension in a project, skipping blank lines and comments.",
    "Write a script that backs up a folder into a timestamped zip file and deletes backups older than 30 days.",
    "Write a simple password manager CLI that stores entries encrypted with a master password (explain the security limits).",
    "Write a script that splits a large CSV into files of 10,000 rows each, repeating the header in every file.",
    "Write a Python script that merges all PDFs in a folder into one, in alphabetical order, using pypdf.",
    "Write a script that monitors a log file and prints a warning when more than 5 ERROR lines appear within a minute.",
    "Write a Python script that generates a weekly study timetable from a list of subjects and hours per subject.",
    "Write a text-adventure skeleton in Python with rooms, exits and an inventory, driven by simple commands.",
    "Write a script that reads a folder of .txt files and builds a word-frequency report for the whole collection, excluding stop words.",
    "Write a script that downloads the images linked on a web page into a folder, skipping ones already downloaded.",
    "Write a Python script that converts a JSON array of objects into a nicely formatted Excel file.",
    "Write a unit converter CLI that handles lengths, weights and temperatures with a dictionary of conversion factors.",
    "Write a Python script that sends a reminder email every morning listing today's birthdays from a CSV file.",
    "Write a script that resizes and compresses all images in a folder so none is wider than 1600 pixels.",
    "Write a Python script that finds the 10 largest folders under a path and prints their sizes in human-readable form.",
    "Write a tiny HTTP server in Python that returns the current time as JSON at /time and 404 elsewhere.",
    "Write a script that reads a bank statement CSV and flags transactions that look like subscriptions (same payee, similar amount, monthly).",
    "Write a Python script that plays rock-paper-scissors against the user, keeps score, and quits on 'q'.",
    "Write a script that compares two CSV files by a key column and writes the differences to a third file.",
    "Write a Python script that extracts all email addresses from the text files in a folder and writes the unique ones, sorted, to a file.",
    "Write a Pomodoro timer for the terminal: 25 minutes of work, 5 of rest, with a countdown display.",
    "Write a script that scans a Python project and lists functions longer than 50 lines, using the ast module.",
    "Write a Python script that turns a list of (name, score) pairs into a ranked leaderboard with ties sharing a rank.",
    "Write a script that creates a new project folder with src/, tests/, a README and a .gitignore from a template.",
    "Write a Python script that polls a weather API every hour and appends the temperature to a CSV file.",
    "Write a flashcard quiz in the terminal that reads questions from a CSV and repeats the ones answered wrongly.",
    "Write a script that checks whether all the links in a Markdown file point to existing local files.",
    "Write a Python script that generates random but valid test data (names, emails, dates) for a users table.",
    "Write a maze generator in Python that prints a random maze with ASCII characters.",
    "Write a script that reads sensor readings from a serial port with pyserial and averages them per minute.",
    "Write a Python script that renames files to remove spaces and accents, and prints a plan before changing anything.",
    "Write a dice-rolling CLI that accepts expressions like '3d6+2' and prints the individual rolls and the total.",
    "Write a script that computes the total duration of all audio files in a folder using the mutagen library.",
]

_MORE_CONCEPTS = [
    "What is the difference between a module and a package in Python?",
    "What does __init__.py do, and are namespace packages without it a good idea?",
    "How does Python find modules when I import something? Explain sys.path.",
    "What is the difference between pip, pipx and a virtual environment?",
    "What is a wheel, and why do some packages need a compiler to install?",
    "Explain what pyproject.toml is for and what goes in its [project] table.",
    "What are descriptors in Python, and how do properties use them?",
    "What is a metaclass, and what is a realistic reason to write one?",
    "How do __getattr__ and __getattribute__ differ?",
    "What are context variables (contextvars), and why are they needed with asyncio?",
    "What is the difference between concurrency and parallelism in Python?",
    "Why is Python called dynamically but strongly typed? Give examples.",
    "What does it mean that functions are first-class objects in Python?",
    "What is a closure, and how is it different from a class with one method?",
    "What is the difference between __new__ and __init__?",
    "How does Python's hash() relate to dictionary keys, and why must equal objects have equal hashes?",
    "What happens when you compare objects of different types with < in Python 3?",
    "What is the difference between mutable and immutable default values, and which types are immutable?",
    "What is structural pattern matching (match/case)? Show matching on a dict and on a class.",
    "What are f-strings' = specifier and format spec mini-language? Show a few examples.",
    "What is the difference between sort(), sorted(), and heapq.nsmallest, and when is each best?",
    "What is the difference between a list, an array.array, and a NumPy array?",
    "How do Python integers handle very large numbers, and what does that cost?",
    "What is the walrus operator's scope inside a comprehension?",
    "Why is `except Exception as e` better than `except BaseException`?",
    "What are exception groups and except* in Python 3.11?",
    "What is the difference between `raise`, `raise e` and `raise NewError() from e`?",
    "What does the `assert` statement do, and why should it not be used to validate user input?",
    "How does reference counting work in CPython, and what is sys.getrefcount useful for?",
    "What is the difference between `copy.copy` and `copy.deepcopy` for objects with custom classes?",
    "What are weak references, and when would I use weakref.WeakValueDictionary?",
    "What is monkey patching, and why is it risky outside of tests?",
    "What is the difference between an abstract base class and a Protocol?",
    "What are Python's name mangling rules for attributes that start with two underscores?",
    "What does `yield from` do, and how is it different from a for loop with yield?",
    "What is a coroutine in Python, and how does await differ from calling a normal function?",
    "Why can't I call an async function from regular code directly, and what are the options?",
    "What is the difference between `__iter__` returning self and returning a new iterator?",
    "What is the `__post_init__` method in a dataclass for?",
    "How do `*` and `**` unpacking work in function calls, list literals and dict literals?",
    "What is the difference between `==` on lists and `is` on lists, and how does `in` compare items?",
    "How do slices work on custom classes? What does __getitem__ receive for obj[1:5:2]?",
    "What is the Python data model, and what are dunder methods for?",
    "What are the main differences between Python 2 and Python 3 that still show up in old tutorials?",
    "What is PEP 8, and which three of its rules matter most for readability?",
    "Why do linters like ruff or flake8 warn about unused imports and variables? Are the warnings ever wrong?",
    "What is the difference between a script, a module run with python -m, and an installed console script?",
    "What is type erasure in Python's typing, and does mypy make code faster?",
    "What are generics with TypeVar bounds and constraints? Show one of each.",
    "What is the difference between `@property` and a plain method in terms of API design?",
]

_MORE_REFACTOR = [
    "Refactor this function so it does not mutate its argument:\n"
    "def add_tax(prices, rate):\n    for i in range(len(prices)):\n        prices[i] = prices[i] * (1 + rate)\n    return prices",
    "Replace the flag variable with a for/else:\n"
    "found = False\nfor path in paths:\n    if path.endswith('.cfg'):\n        found = True\n        break\nif not found:\n    print('no config')",
    "Simplify this nested dictionary access with a helper or dict.get chains:\n"
    "city = None\nif 'user' in data:\n    if 'address' in data['user']:\n        if 'city' in data['user']['address']:\n"
    "            city = data['user']['address']['city']",
    "Replace these parallel lists with a list of dataclass objects and show the new loop:\n"
    "names = ['a', 'b']\nprices = [1.0, 2.5]\nstock = [10, 0]\nfor i in range(len(names)):\n"
    "    if stock[i] > 0:\n        print(names[i], prices[i])",
    "Make this function easier to test by separating the I/O from the logic:\n"
    "def report():\n    data = open('scores.txt').read().split()\n    scores = [int(x) for x in data]\n"
    "    print('average', sum(scores) / len(scores))",
    "Rewrite this with a context manager and pathlib:\n"
    "f = open(os.path.join(folder, name), 'w')\nf.write(text)\nf.close()",
    "Refactor these repeated blocks into a loop over a table of settings:\n"
    "if mode == 'small':\n    width, height, dpi = 640, 480, 72\nelif mode == 'medium':\n"
    "    width, height, dpi = 1280, 720, 96\nelif mode == 'large':\n    width, height, dpi = 1920, 1080, 144",
    "Replace the manual index tracking with enumerate and zip:\n"
    "i = 0\nfor row in rows:\n    label = labels[i]\n    print(i, label, row)\n    i = i + 1",
    "Turn this callback-heavy code into a generator pipeline:\n"
    "def process(lines, on_item):\n    for line in lines:\n        line = line.strip()\n        if line and not line.startswith('#'):\n"
    "            on_item(line.split('='))",
    "Convert this class with only a constructor and one method into a function, and explain when that is better:\n"
    "class Greeter:\n    def __init__(self, name):\n        self.name = name\n    def greet(self):\n"
    "        return f'Hello, {self.name}!'",
    "Remove the duplicated code in these two functions:\n"
    "def mean_height(people):\n    total = 0\n    for p in people:\n        total += p.height\n    return total / len(people)\n\n"
    "def mean_weight(people):\n    total = 0\n    for p in people:\n        total += p.weight\n    return total / len(people)",
    "Rewrite these string-typed statuses with an Enum and show what it protects against:\n"
    "def can_ship(order):\n    return order['status'] == 'paid' or order['status'] == 'Paid'",
    "Replace this global configuration with explicit parameters:\n"
    "CONFIG = {}\n\ndef connect():\n    return make_client(CONFIG['host'], CONFIG['port'])",
    "Make this recursive function iterative so it cannot hit the recursion limit:\n"
    "def depth(node):\n    if node is None:\n        return 0\n    return 1 + max(depth(node.left), depth(node.right))",
    "Simplify this with a set operation:\n"
    "missing = []\nfor item in required:\n    if item not in present:\n        missing.append(item)",
    "Clean up this exception handling so real errors are not hidden:\n"
    "def load(path):\n    try:\n        with open(path) as f:\n            return json.load(f)\n    except Exception:\n        return {}",
    "Replace this sleep-polling loop with something better:\n"
    "while not os.path.exists('done.flag'):\n    time.sleep(0.01)",
    "Split this long function into smaller ones and name them:\n"
    "def handle(order):\n    if not order.get('items'):\n        raise ValueError('empty')\n"
    "    total = sum(i['qty'] * i['price'] for i in order['items'])\n    if order.get('coupon') == 'SAVE10':\n"
    "        total *= 0.9\n    send_email(order['email'], f'Total: {total:.2f}')\n    db.save(order, total)",
    "Refactor this to use a dictionary of handlers instead of isinstance checks:\n"
    "def area(shape):\n    if isinstance(shape, Circle):\n        return 3.14159 * shape.r ** 2\n"
    "    elif isinstance(shape, Square):\n        return shape.side ** 2\n    elif isinstance(shape, Rect):\n"
    "        return shape.w * shape.h",
    "Rewrite this code to build the string efficiently:\n"
    "html = ''\nfor row in rows:\n    html = html + '<tr><td>' + row[0] + '</td><td>' + row[1] + '</td></tr>'",
]

_MORE_COMPLEXITY = [
    "What is the time complexity of `x in my_list` versus `x in my_set`, and when is converting a list to a set worth it?",
    "What is the complexity of this function?\n"
    "def count_pairs(nums, k):\n    seen = {}\n    pairs = 0\n    for n in nums:\n        pairs += seen.get(k - n, 0)\n"
    "        seen[n] = seen.get(n, 0) + 1\n    return pairs",
    "What is the time complexity of this recursive function, and how much stack does it use?\n"
    "def power(x, n):\n    if n == 0:\n        return 1\n    half = power(x, n // 2)\n    return half * half * (x if n % 2 else 1)",
    "Estimate the complexity of this code that builds all substrings:\n"
    "subs = [s[i:j] for i in range(len(s)) for j in range(i + 1, len(s) + 1)]",
    "Why is inserting at the start of a Python list O(n), and what does that mean for a loop that does it n times?",
    "What is the amortized cost of list.append in Python, and why is it not O(n)?",
    "What is the space complexity of sorted(data) versus data.sort()?",
    "What is the complexity of this function that checks anagrams, and is there a linear-time version?\n"
    "def is_anagram(a, b):\n    return sorted(a) == sorted(b)",
    "How expensive is string slicing in Python, and why can a loop of s = s[1:] be quadratic?",
    "What is the complexity of dict.keys() & other_dict.keys()?",
    "How does the complexity of heapq.nlargest(k, data) compare with sorted(data)[-k:]?",
    "What is the time complexity of this memoized function?\n"
    "from functools import cache\n\n@cache\ndef ways(n):\n    return 1 if n <= 1 else ways(n - 1) + ways(n - 2)",
]

_PERFORMANCE = [
    "How do I profile a slow Python script with cProfile and read the output to find the hot spot?",
    "My loop over 10 million numbers takes 8 seconds. What are the options to speed it up: built-ins, NumPy, or Numba?",
    "Why are local variable lookups faster than global ones in Python, and does it matter in practice?",
    "How much memory does a list of a million small ints use, and how do array.array or NumPy compare?",
    "When does using __slots__ save a noticeable amount of memory?",
    "How do I measure the peak memory of a Python function with tracemalloc?",
    "Is a list comprehension really faster than a for loop with append? Explain why and how to measure it fairly.",
    "How do I speed up many small string concatenations, and when does it not matter?",
    "My program reads a 2 GB file line by line and is slow. What can I do to speed up the I/O?",
    "When should I consider Cython, PyPy or writing a C extension for a Python hot spot?",
    "How does functools.cache trade memory for speed, and how can it leak memory in a long-running service?",
    "Why can a regular expression be extremely slow on some inputs (catastrophic backtracking), and how do I avoid it?",
    "How do I make many HTTP requests faster in Python: threads, asyncio, or multiprocessing?",
    "What does line_profiler show that cProfile does not, and how do I use it?",
    "Why is pandas apply slow, and what are the faster alternatives?",
]

_CONVERT_CODE = [
    "Translate this JavaScript function to idiomatic Python:\n"
    "function groupBy(arr, key) {\n  return arr.reduce((acc, x) => {\n    (acc[x[key]] ||= []).push(x);\n    return acc;\n  }, {});\n}",
    "Convert this Java class to a Python dataclass:\n"
    "public class Book {\n  private final String title;\n  private final int year;\n"
    "  public Book(String title, int year) { this.title = title; this.year = year; }\n"
    "  public String getTitle() { return title; }\n  public int getYear() { return year; }\n}",
    "Rewrite this C loop in Python without indexes:\n"
    "int total = 0;\nfor (int i = 0; i < n; i++) {\n  if (values[i] % 2 == 0) total += values[i];\n}",
    "Translate this Bash script to Python with pathlib:\n"
    "for f in *.log; do\n  if grep -q ERROR \"$f\"; then\n    mv \"$f\" errors/\n  fi\ndone",
    "Convert this R snippet to pandas:\n"
    "df %>% filter(year >= 2020) %>% group_by(region) %>% summarise(mean_sales = mean(sales))",
    "Translate this Go function to Python, keeping the error handling idea:\n"
    "func parseAge(s string) (int, error) {\n  n, err := strconv.Atoi(s)\n  if err != nil { return 0, err }\n"
    "  if n < 0 { return 0, errors.New(\"negative age\") }\n  return n, nil\n}",
    "Rewrite this SQL in plain Python over a list of dicts:\n"
    "SELECT city, COUNT(*) AS n FROM users WHERE active = 1 GROUP BY city ORDER BY n DESC;",
    "Convert this JavaScript Promise chain to Python asyncio:\n"
    "fetchUser(id)\n  .then(user => fetchOrders(user.id))\n  .then(orders => console.log(orders.length))\n  .catch(err => console.error(err));",
    "Translate this C# LINQ query to a Python comprehension:\n"
    "var names = people.Where(p => p.Age >= 18).OrderBy(p => p.Name).Select(p => p.Name).ToList();",
    "Convert this MATLAB code to NumPy:\n"
    "A = rand(3);\nb = [1; 2; 3];\nx = A \\ b;\ndisp(norm(A*x - b));",
    "Rewrite this Python 2 code for Python 3:\n"
    "print 'Total:', total\nfor k, v in d.iteritems():\n    print k, v\nname = raw_input('Name: ')",
    "Translate this Rust match expression to Python 3.10 pattern matching:\n"
    "match cmd {\n  Command::Move { x, y } => move_to(x, y),\n  Command::Quit => quit(),\n  _ => println!(\"unknown\"),\n}",
]

_TOOLING = [
    "How do I set up a new Python project with a virtual environment, pyproject.toml, ruff and pytest from scratch?",
    "What is the difference between requirements.txt and pyproject.toml dependencies, and what is a lock file for?",
    "How do I publish a small Python package to PyPI? List the steps.",
    "How do I add a console script entry point so my package installs a command-line tool?",
    "How do I use pre-commit to run ruff and a formatter before every commit?",
    "How do I debug a Python script with breakpoint() and pdb? Show the five most useful commands.",
    "How do I run only one test, or only tests matching a name, with pytest?",
    "What is the difference between black, ruff format and autopep8?",
    "How do I configure mypy for a project and gradually add type checking to untyped code?",
    "How do I build a Docker image for a small Python web app that keeps the image small?",
    "How do I manage several Python versions on one machine with pyenv or uv?",
    "How do I set up GitHub Actions to run pytest on Python 3.10, 3.11 and 3.12?",
    "Why does 'ModuleNotFoundError' happen when I run a script inside my package, and how does python -m fix it?",
    "How do I install a package in editable mode, and what does that do?",
    "How do I read a package's version at runtime with importlib.metadata?",
    "How should I structure a Python project with src/ layout, and why do some people prefer it?",
    "How do I use environment-specific settings (dev, test, prod) in a Python app without hard-coding secrets?",
    "How do I write a Makefile or a task runner file with common commands for a Python project?",
]

_ERROR_MESSAGES = [
    "What does 'TypeError: unhashable type: 'list'' mean, and how do I fix it?",
    "What causes 'IndentationError: unindent does not match any outer indentation level'?",
    "What does 'AttributeError: 'NoneType' object has no attribute 'split'' usually point to?",
    "I get 'ValueError: too many values to unpack (expected 2)'. What does it mean?",
    "What does 'TypeError: 'module' object is not callable' mean, for example after import datetime?",
    "Why do I get 'ImportError: cannot import name X from partially initialized module' (circular import)?",
    "What does 'RecursionError: maximum recursion depth exceeded' mean, and when should I raise the limit?",
    "What does 'UnicodeDecodeError: 'utf-8' codec can't decode byte 0xff' mean when reading a file?",
    "What causes 'TypeError: missing 1 required positional argument: 'self''?",
    "What does 'KeyError: 0' mean when I loop over a pandas Series?",
    "What does 'IndexError: list index out of range' tell me, and how do I find which index was wrong?",
    "Why do I get 'TypeError: 'str' object does not support item assignment'?",
    "What does 'NameError: name 'x' is not defined' mean when x is defined inside an if block?",
    "What does 'OSError: [Errno 24] Too many open files' mean, and how do I fix it?",
    "What does 'RuntimeError: Event loop is closed' mean in asyncio code?",
    "What does 'json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)' usually mean?",
    "What does 'TypeError: Object of type datetime is not JSON serializable' mean?",
    "Why do I get 'SyntaxError: invalid syntax' on a line with print 'hello'?",
    "What does 'ZeroDivisionError: float division by zero' mean, and how do I guard against it?",
    "What does 'PermissionError: [Errno 13] Permission denied' mean when writing a file on Windows?",
    "What does 'ModuleNotFoundError: No module named 'requests'' mean when pip says it is installed?",
    "What does 'TypeError: '<' not supported between instances of 'str' and 'int'' mean when sorting?",
    "What does 'AttributeError: 'list' object has no attribute 'lower'' tell me about my data?",
    "What does 'StopIteration' mean when I call next() on a generator?",
    "What does 'OverflowError: math range error' mean from math.exp?",
    "What does 'ValueError: invalid literal for int() with base 10: '3.5'' mean?",
    "What does 'TypeError: can't compare offset-naive and offset-aware datetimes' mean?",
    "What does 'MemoryError' mean, and what can I do when my script runs out of memory?",
    "What does 'BrokenPipeError: [Errno 32] Broken pipe' mean when I pipe my script's output into head?",
    "What does 'SyntaxError: f-string: expecting '}'' mean?",
]

_REGEX_TASKS = [
    "Write a regular expression that matches UK postcodes like 'SW1A 1AA' and 'M1 1AE', and test it on a few examples.",
    "Write a Python regex that extracts hashtags from a tweet, including ones with underscores.",
    "Use re.sub with a function to convert all 'snake_case' words in a text to 'camelCase'.",
    "Write a regex that validates times in 24-hour format, like 07:45 and 23:59, but not 24:00.",
    "Extract the key and value from lines like 'timeout = 30  # seconds' with a regex, ignoring the comment.",
    "Write a regex that finds repeated words, such as 'the the', in a text, case-insensitively.",
    "Use a regex to split a sentence into words and punctuation marks as separate tokens.",
    "Write a regex that matches prices like '$1,299.99' and '$5' and captures the number.",
    "How do I match a literal dot or a literal question mark in a Python regex, and what does re.escape do?",
    "Write a regex with lookahead that checks a password has at least one digit and one uppercase letter.",
    "Use re.finditer to find all numbers in a text along with their positions.",
    "Write a regex that extracts the domain from URLs like 'https://sub.example.co.uk/path?q=1'.",
    "What does the re.VERBOSE flag do? Rewrite a complex phone-number regex with comments.",
    "Write a regex that matches a date in either '2024-03-07' or '07/03/2024' format and normalizes both to ISO.",
    "Why does the regex '<.*>' match too much in '<b>bold</b>', and how does a non-greedy quantifier fix it?",
    "Write a regex that removes everything in parentheses, including the parentheses, from a string.",
    "Use a regex to parse Apache access log lines into IP, timestamp, method, path and status.",
    "Write a regex that checks a string is a valid Python identifier, and compare it with str.isidentifier().",
]

# Classes to design: (name, description).
_CLASS_SPECS = [
    ("ShoppingCart", "holds items with quantities and unit prices, applies a percentage coupon once, and reports the total"),
    ("ParkingLot", "has a fixed number of spaces per vehicle size, parks and removes vehicles, and reports free spaces"),
    ("Library", "lends books to members, refuses a loan when a member already has five books, and lists overdue loans"),
    ("Thermostat", "keeps a target temperature, decides whether to heat or cool from a reading, and ignores changes smaller than half a degree"),
    ("RateLimiter", "allows at most N events per rolling window of seconds for each user id"),
    ("Polynomial", "stores coefficients, supports +, * and evaluation at a point, and prints like 3x^2 - x + 2"),
    ("Fraction", "stores a reduced numerator and denominator and supports +, -, *, / and comparison"),
    ("Matrix2x2", "supports multiplication, determinant, inverse, and raises a clear error for singular matrices"),
    ("TodoList", "adds tasks with due dates and priorities, marks them done, and lists the open ones sorted by due date"),
    ("ElevatorController", "accepts floor requests and decides which floor the single elevator visits next"),
    ("VendingMachine", "tracks stock and inserted coins, dispenses an item, and returns change with the fewest coins"),
    ("Gradebook", "records scores per student and assignment, computes weighted averages, and lists students below a threshold"),
    ("Tournament", "schedules a round-robin between teams and keeps a points table with wins, draws and losses"),
    ("BankLedger", "records deposits and withdrawals with timestamps and can report the balance at any past time"),
    ("EventCalendar", "stores events with start and end times and finds free slots of a given length in a day"),
    ("Recipe", "holds ingredients with amounts and units and can scale to a different number of servings"),
    ("Deck", "holds 52 playing cards, shuffles with a seed, deals hands, and knows how many cards are left"),
    ("Board", "represents a tic-tac-toe board, accepts moves, rejects illegal ones, and reports a winner or a draw"),
    ("URLShortener", "turns long URLs into short codes, expands codes back, and counts how often each code is used"),
    ("InventoryItem", "validates that price and quantity are never negative using properties"),
    ("Graph", "stores a directed graph and offers topological ordering and reachability queries"),
    ("SensorBuffer", "keeps the last 100 readings of a sensor and reports the mean, minimum and maximum"),
    ("Invoice", "has line items, tax rates per line, a discount, and renders itself as plain text"),
    ("UserAccount", "stores a username and a hashed password, checks a login, and locks after three failed attempts"),
    ("Playlist", "adds and removes songs, shuffles without repeating until all have played, and reports total duration"),
    ("Timer", "can be started, paused, resumed and reset, and reports elapsed time"),
    ("Money", "stores an amount and a currency, refuses to add different currencies, and formats itself nicely"),
    ("Snake", "models the snake in the classic game: moves, grows when it eats, and detects hitting itself"),
    ("Spreadsheet", "stores cell values and simple formulas like '=A1+B2' and recalculates dependent cells"),
    ("BloomCounter", "counts word frequencies in a stream approximately with a count-min sketch"),
    ("Config", "loads defaults, then a file, then environment variables, and gives typed access to values"),
    ("Pipeline", "chains functions that each transform a record and skips records for which a step returns None"),
    ("JobQueue", "accepts jobs with priorities, hands out the most urgent one, and retries failed jobs up to three times"),
    ("HotelBooking", "books rooms for date ranges, refuses overlapping bookings, and lists free rooms for a range"),
    ("StateMachine", "has named states and allowed transitions and raises an error on an invalid transition"),
    ("Vector3", "supports addition, dot and cross products, length, and normalization"),
]

_CLASS_TASKS = [
    "Write a Python class `{name}` that {desc}.",
    "Design a `{name}` class that {desc}. Explain which methods and attributes you chose and why.",
    "Write a `{name}` class that {desc}, and pytest tests for its most important behaviour.",
    "I need a `{name}` that {desc}. Write it with type hints and make invalid use raise helpful exceptions.",
]

_BEGINNER = [
    "Write a Python program that asks for the user's age and tells them in which year they will turn 100.",
    "Write a program that prints the multiplication table from 1 to 10 as a neat grid.",
    "Write a Python program that converts a temperature typed by the user from Celsius to Fahrenheit and back, depending on a choice.",
    "Write a program that asks for five numbers and prints the largest, the smallest and the average.",
    "Write a Python program that checks whether a word typed by the user is a palindrome.",
    "Write a program that counts down from 10 to 1 with a one-second pause and then prints 'Liftoff!'.",
    "Write a Python program that prints the first 20 numbers of the Fibonacci sequence.",
    "Write a program that asks for a password twice and tells the user whether the two entries match.",
    "Write a simple calculator that reads two numbers and an operator and prints the result, handling division by zero.",
    "Write a Python program that prints a right triangle of stars with a height chosen by the user.",
    "Write a program that reads a sentence and prints how many words, letters and vowels it contains.",
    "Write a Python program that picks a random motivational quote from a list each time it runs.",
    "Write a program that keeps asking for numbers until the user types 'done' and then prints their sum.",
    "Write a Python program that converts a number of minutes into hours and minutes, like 135 -> 2 h 15 min.",
    "Write a program that simulates rolling two dice 1,000 times and prints how often each total came up.",
    "Write a Python program that tells whether a year entered by the user is a leap year.",
    "Write a program that stores a small phone book in a dictionary and lets the user look up names.",
    "Write a Python program that prints all even numbers between two numbers the user gives.",
    "Write a program that asks quiz questions from a list and prints the score at the end.",
    "Write a Python program that reverses the order of the words in a sentence typed by the user.",
    "Write a program that calculates a restaurant tip for a bill and a tip percentage and splits it between people.",
    "Write a Python program that draws a square and a star with the turtle module.",
    "Write a program that prints whether each number from 1 to 30 is prime.",
    "Write a Python program that calculates body mass index from height and weight and prints the category.",
    "Write a program that reads a text file and prints its longest line.",
    "Write a Python program that asks for a list of names and prints them sorted alphabetically and by length.",
    "Write a program that converts a decimal number to binary without using bin().",
    "Write a Python program that simulates a coin flip until it lands heads three times in a row and counts the flips.",
    "Write a program that checks whether three side lengths can form a triangle and, if so, what kind.",
    "Write a Python program that prints a calendar for the current month using the calendar module.",
    "Write a hangman game in Python for the terminal with a small list of words.",
    "Write a program that reads grades for a class and prints how many students got each letter grade.",
    "Write a Python program that shows how much money a savings account will hold after a number of years with yearly interest.",
    "Write a program that asks for a string and prints it with every second letter capitalized.",
    "Write a Python program that finds all the numbers between 1 and 1,000 whose digits add up to 10.",
    "Write a program that stores today's mood in a text file with the date, and shows the last 7 entries.",
]


def _extended(seen: set[str]) -> list[tuple[str, str]]:
    """The appended prompts. The requests for one function, data structure or class share a group
    ("function-edit_distance", "structure-trie", "class-design-Deck"), as do one library's tasks ("lib-pandas"),
    one bug pattern shown in different code ("bug-late-binding") and one operation on different records
    ("records-op-3"); every other prompt is its own group."""
    rng = random.Random(20251204)
    out: list[tuple[str, str]] = []
    for sig, desc, _ in _MORE_FUNCS:
        name = sig.split("(", 1)[0]
        for task in rng.sample(_MORE_FUNC_TASKS, 4):
            out.append((f"function-{name}", task.format(sig=sig, name=name, desc=desc)))
    for name, what, ops in _STRUCTURES:
        for task in rng.sample(_STRUCTURE_TASKS, 4):
            out.append((f"structure-{name.replace(' ', '-')}", task.format(name=name, what=what, ops=ops)))
    for lib, tasks in _LIBRARY_TASKS.items():
        out.extend((f"lib-{lib}", task) for task in tasks)
    for pattern, leads, code in _BUG_PATTERNS:
        for ctx in rng.sample(_BUG_CONTEXTS, 4):
            values = dict(ctx, Item=ctx["item"].capitalize())
            out.append((f"bug-{pattern}", f"{rng.choice(leads).format(**values)}\n{code.format(**values)}"))
    for i, op in enumerate(_RECORD_OPS, start=1):
        for what, example in rng.sample(_RECORDS, 12):
            out.append((f"records-op-{i}", op.format(what=what, example=example)))
    for name, desc in _CLASS_SPECS:
        for task in rng.sample(_CLASS_TASKS, 3):
            out.append((f"class-design-{name}", task.format(name=name, desc=desc)))
    for i, snippet in enumerate(_MORE_EXPLAIN_SNIPPETS, start=len(_EXPLAIN_SNIPPETS) + 1):
        out.append((f"explain-snippet-{i}", f"{rng.choice(_EXPLAIN_PREFIXES)}\n{snippet}"))
    standalone = {
        "script": (_SCRIPTS, 0), "concept": (_MORE_CONCEPTS, len(_CONCEPTS)),
        "refactor": (_MORE_REFACTOR, len(_REFACTOR)), "complexity": (_MORE_COMPLEXITY, len(_COMPLEXITY)),
        "performance": (_PERFORMANCE, 0), "convert": (_CONVERT_CODE, 0), "tooling": (_TOOLING, 0),
        "error-message": (_ERROR_MESSAGES, 0), "regex": (_REGEX_TASKS, 0), "beginner": (_BEGINNER, 0),
        "review": (_CODE_REVIEW, 0), "algorithm": (_ALGORITHMS, 0), "project-design": (_PROJECT_DESIGN, 0),
    }
    for kind, (texts, start) in standalone.items():
        out.extend((f"{kind}-{i}", text) for i, text in enumerate(texts, start=start + 1))
    rng.shuffle(out)
    result = []
    for group, text in out:
        text = text.strip()
        if text and text not in seen:
            seen.add(text)
            result.append((group, text))
    return result


def prompts() -> list[tuple[str, str]]:
    """(group, prompt) pairs: the original prompts first, unchanged, then the extension (see `_extended`)."""
    result = _original()
    result += _extended({text for _, text in result})
    assert len(result) >= 1850, len(result)
    return result

_CODE_REVIEW = [
    "Review this function and suggest improvements:\n"
    "def get_user(users, id):\n    for u in users:\n        if u['id'] == id:\n            return u\n    return False",
    "What would you change in this code review?\n"
    "def save(data):\n    f = open('data.json', 'w')\n    f.write(str(data))\n    print('saved')",
    "Review this class for bugs and style problems:\n"
    "class account:\n    def __init__(self, Balance):\n        self.Balance = Balance\n    def Withdraw(self, x):\n"
    "        self.Balance = self.Balance - x\n        return self.Balance",
    "Is anything wrong with this cache? Review it:\n"
    "cache = {}\ndef fetch(url):\n    if url in cache:\n        return cache[url]\n    cache[url] = requests.get(url).text\n    return cache[url]",
    "Review this input handling:\n"
    "age = input('Age: ')\nif age > 18:\n    print('adult')",
    "Review this SQL access code for security and correctness:\n"
    "def find(conn, name):\n    cur = conn.execute(f\"SELECT * FROM users WHERE name = '{name}'\")\n    return cur.fetchall()",
    "Give a code review of this loop:\n"
    "result = []\nfor i in range(len(orders)):\n    if orders[i]['status'] == 'open' and orders[i]['total'] != None:\n"
    "        result.append(orders[i]['total'])\ntotal = 0\nfor r in result:\n    total = total + r",
    "Review this threading code:\n"
    "results = []\ndef work(n):\n    results.append(n * n)\nthreads = [threading.Thread(target=work, args=(i,)) for i in range(10)]\n"
    "for t in threads:\n    t.start()\nprint(results)",
    "Review this function's error handling and naming:\n"
    "def proc(l):\n    try:\n        return [int(x) for x in l]\n    except:\n        print('error')",
    "Review this API client and suggest how to make it testable:\n"
    "class Weather:\n    def today(self):\n        r = requests.get('https://api.example.com/today?key=SECRET123')\n"
    "        return r.json()['temp']",
    "Review this date handling:\n"
    "from datetime import datetime\ndef is_expired(expiry: str) -> bool:\n    return datetime.strptime(expiry, '%Y-%m-%d') < datetime.now()",
    "Review this recursive directory walk:\n"
    "def list_files(path):\n    files = []\n    for name in os.listdir(path):\n        full = path + '/' + name\n"
    "        if os.path.isdir(full):\n            files = files + list_files(full)\n        else:\n            files.append(full)\n    return files",
    "Review this config loader:\n"
    "def load_config():\n    global config\n    config = eval(open('config.txt').read())",
    "Review this money calculation:\n"
    "def total_with_tax(prices):\n    total = 0.0\n    for p in prices:\n        total += p * 1.2\n    return round(total, 2)",
    "Review this generator and say whether it works as intended:\n"
    "def read_batches(path, n):\n    batch = []\n    for line in open(path):\n        batch.append(line)\n"
    "        if len(batch) == n:\n            yield batch\n            batch = []",
    "Review this test and explain what it fails to check:\n"
    "def test_sort():\n    result = my_sort([3, 1, 2])\n    assert len(result) == 3",
]

_ALGORITHMS = [
    "Explain how quicksort works, implement it in Python, and say when its worst case happens.",
    "Explain merge sort step by step on the list [5, 2, 9, 1, 6] and implement it.",
    "How does binary search on the answer work? Use it to find the smallest capacity that ships packages within D days.",
    "Explain the two-pointer technique with the problem of finding a pair with a given sum in a sorted list.",
    "Explain the sliding-window technique and use it to find the maximum sum of any k consecutive numbers.",
    "Explain dynamic programming with the climbing-stairs problem, first top-down and then bottom-up.",
    "Explain how Dijkstra's algorithm works and why it fails with negative edge weights.",
    "How does breadth-first search find shortest paths in an unweighted grid maze? Implement it in Python.",
    "Explain backtracking with the problem of generating all valid combinations of n pairs of parentheses.",
    "Explain how a hash table handles collisions, and sketch a tiny one in Python with separate chaining.",
    "Explain topological sorting with Kahn's algorithm and implement it for a course-prerequisite list.",
    "How does the union-find structure detect a cycle in an undirected graph? Implement it.",
    "Explain how to detect a cycle in a linked list with Floyd's tortoise and hare.",
    "Explain prefix sums and use them to answer many range-sum queries on a fixed list quickly.",
    "Explain the greedy approach to the activity-selection problem and why it is optimal.",
    "How does the KMP string-search algorithm avoid re-checking characters? Implement its prefix table.",
    "Explain how a heap helps merge k sorted lists, and implement it with heapq.",
    "Explain memoization versus tabulation using the longest common subsequence problem.",
    "How does a trie speed up autocomplete compared with scanning a word list?",
    "Explain reservoir sampling and implement choosing k random lines from a file of unknown length.",
]

_PROJECT_DESIGN = [
    "How would you structure a Python command-line app that tracks personal expenses, with storage, reports and tests?",
    "I'm building a small web scraper that runs daily and stores results. How should I organize the code and handle failures?",
    "How should I design a Python library so that users can plug in their own storage backend?",
    "What is a good way to structure a Discord or Telegram bot in Python so commands stay manageable as it grows?",
    "How would you organize a data-analysis project in Python so notebooks and reusable code do not get tangled?",
    "How should I handle configuration, logging and errors in a Python service that runs as a background worker?",
    "I want to turn a 600-line script into a maintainable package. Which steps would you take, in order?",
    "How would you design a plugin system in Python using entry points?",
    "What is dependency injection in Python, and how can it make a Flask app easier to test?",
    "How would you design the classes for a simple chess game in Python?",
    "How should a Python app store user-uploaded files and their metadata?",
    "How would you build a job scheduler in Python that runs tasks at set times and survives restarts?",
]
