<?php
// Writes php-sort-cases.json: inputs and the order real PHP 8 `sort()` (SORT_REGULAR) puts them
// in, which src/domain/php-sort.ts must reproduce (test/merchandise/signature.test.ts).
//
// Regenerate (Debian: `apt-get install php-cli`):
//   php test/merchandise/php-sort-cases.php > test/merchandise/php-sort-cases.json
// The inputs are fixed (a seeded generator), so the file changes only when PHP's sort() does;
// test/merchandise/php-sort-fixture.test.ts runs this script and compares.

// Strings where the two comparisons of SORT_REGULAR disagree or are subtle: numeric and not,
// leading zeros, leading/trailing whitespace, signs, exponents, 64-bit overflow, hex (not numeric
// in PHP 8), NAN/INF spelled out (not numeric), UTF-8 above and below U+FFFF, empty.
const POOL = [
    "", "\t7", " 5", "+1", "-1", "-1e400", "-9223372036854775808", "-9223372036854775809", ".5", "0",
    "0.1", "05", "0x1A", "1", "1 1", "1.5e1", "10", "10.0", "100000000000000000000", "11", "111",
    "12.5", "12.50", "15", "150", "1E3", "1e", "1e+", "1e1", "1e3", "1e400", "1f", "2", "3", "30", "4",
    "5 ", "5.", "5.0", "7\n", "9", "9223372036854775807", "9223372036854775808", "99999999999999999999",
    "9a", "EUR", "NAN", "USD", "Z", "a", "a b", "aa", "ab", "abc", "inf", "shop1", "z", "\u{c4}",
    "\u{e4}", "\u{e9}", "\u{ffff}", "\u{1f600}", "-0", "0.0", "1e-5", " ", "+.5", "1.", "00", "\v5",
];

// Hand-picked first: the cases that motivated the emulation.
$inputs = [
    ["5 ", "9", "-1", "150", "-1", "15", "1E3", "0", "5.0", " 5", "a b"],
    ["NAN", "-1e400", "3", "+1", "EUR", " 5", "99999999999999999999", "-9223372036854775809", "12.50"],
    ["12.5", "", "3", "12.50", "\u{c4}", "ab", "2", "9a", "1 1"],
    ["5.0", "9", "10", "100000000000000000000", "2"],
    ["9223372036854775808"],
    ["-9223372036854775808"],
    ["a b", "9", "9a", "1e3", "Z"],
    ["30", "150", "abc"],
    ["9a", "10", "9"],
    ["1e1", "9", "1f"],
    ["1.0", "01", "1"],
    [".5", "\u{e4}", "EUR", "1e1", "1e3", "\u{ffff}", "\u{e4}", "5 ", "\u{ffff}"],
];

// Then seeded random mixes. Sizes cover every path of zend_sort: the 2–5 element networks, the
// insertion sort (6–16), quicksort with a 3-point pivot (17–1023) and with a 5-point pivot (≥ 1024).
mt_srand(20241126);
$sizes = [1, 2, 3, 4, 5, 6, 9, 12, 16, 17, 25, 33, 40, 64];
for ($i = 0; $i < 290; $i++) {
    $n = $sizes[mt_rand(0, count($sizes) - 1)];
    $case = [];
    for ($j = 0; $j < $n; $j++) $case[] = POOL[mt_rand(0, count(POOL) - 1)];
    $inputs[] = $case;
}
foreach ([1024, 1500] as $n) {
    $case = [];
    for ($j = 0; $j < $n; $j++) $case[] = POOL[mt_rand(0, count(POOL) - 1)];
    $inputs[] = $case;
}

// One case per line, so a change shows as a readable diff.
$flags = JSON_UNESCAPED_UNICODE | JSON_UNESCAPED_SLASHES | JSON_THROW_ON_ERROR;
$lines = [];
foreach ($inputs as $input) {
    $sorted = $input;
    sort($sorted);
    $lines[] = json_encode(['input' => $input, 'php' => $sorted], $flags);
}
$by = 'PHP ' . PHP_VERSION . ' sort() (SORT_REGULAR) on each input; made by test/merchandise/php-sort-cases.php';
echo '{"generatedBy":', json_encode($by, $flags), ',"cases":[', "\n", implode(",\n", $lines), "\n]}\n";
