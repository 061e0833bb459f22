// The corpus for test_bpe_gpt2_oracle, encoded by gpt-3-encoder (run by
// tests/data/gpt2_oracle.sh from the top of the tree): a line per string, its
// UTF-8 in hex, a tab, the ids.
'use strict';
const path = require('path');
const enc = require(path.resolve(process.argv[2], 'Encoder.js'));

// By hand: each a case of the pattern or of the byte table.
const fixed = [
    'Hello, world!', 'The quick brown fox jumps over the lazy dog.',
    "D'Souza's", "'Sam'", "it's", "I'm", "you're", "we've", "he'll", "she'd", "don't", "it'S",
    "'s", "''s", "x'sy",
    "O'Neil's 'll 're 've 'm 'd 't", "rock 'n' roll", "can't won't shan't",
    '12345', '3.14159', '1,000,000', 'abc123def', 'x2 + y2 = z2', ' 42', '  42', '42  ',
    'a  b', 'a   b', 'a\tb', 'a\t\tb', 'a\nb', 'a\n\nb', '\n\n\nHello', 'Hello\n', 'Hello \n',
    '   ', ' ', '\t', '\n', '\r\n', 'end   ', 'x \t y', ' \n x', '!!!', ' !!!', '...?!', '(a)',
    '"quoted"', "'single'", '--flag=value', 'path/to/file.c:42:7', 'a_b_c', '#include <stdio.h>',
    'café crème brûlée', 'naïve façade', 'Ærøskøbing', 'Straße', 'Ελληνικά κείμενα', 'Καλημέρα!',
    'Привет, мир', '中文字符测试', '日本語のテキスト、カタカナ', '한국어 텍스트', 'مرحبا بالعالم', 'עברית',
    'हिन्दी', 'ไทย', '😀', 'emoji 🎉🎉 party 👍🏽', '👨‍👩‍👧', '①②③ ½ ¾', 'Ⅻ roman', '٣٤٥ arabic digits',
    '０１２ fullwidth', '\u00a0nbsp\u00a0', 'a\u3000b', 'a\u2003b', 'x\u2028y', '\u0000nul\u0001', '\u007f',
    '\u00ad soft hyphen', 'Ā ā ĉ', 'ſ', 'µ', 'ª º', 'tab\tand\nnewline\r\n',
    '<|endoftext|>', 'ĠĠ Ġ', 'mixed: café 42 Ελλάδα 中文 😀 !!\n\n\t x',
];

// Random mixtures of pieces (a fixed-seed generator: the same corpus every run).
const pieces = [
    'the', ' the', 'The', ' cat', "'s", "'t", "'re", "'ll", "'ve", "'m", "'d", "'", 'x', 'ing',
    ' ', '  ', '   ', '\t', '\n', '\n\n', '\r', ' \n', '\t ', '0', '7', '42', ' 2026', '3.5', ',',
    '.', '!', '?', '...', ' --', ' (', ')', '"', '#', '@', '$5', '%', '&', '*', '_', '-', '/', '\\',
    'é', 'ü', 'ñ', 'ç', 'ß', 'Ω', 'λόγος', 'мир', '中', '文', '字', 'の', 'カ', '한', 'ع', '😀', '🎉',
    '👍🏽', '½', '²', 'Ⅷ', '٣', '\u00a0', '\u3000', '\u2009', 'A', 'Z', 'q', 'ĠĠ', 'Ċ', 'ÿ', '¡',
];
let seed = 12345;
function rand(n) {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return Math.floor((seed / 2147483648) * n);
}
const mixed = [];
for (let i = 0; i < 400; i++) {
    let s = '';
    const k = 1 + rand(12);
    for (let j = 0; j < k; j++)
        s += pieces[rand(pieces.length)];
    mixed.push(s);
}

// Real text: every paragraph of qkv's README and docs (prose, code, tables, Unicode).
const fs = require('fs');
const docs = ['README.md'].concat(fs.readdirSync('docs').filter(f => f.endsWith('.md')).sort()
                                   .map(f => 'docs/' + f));
const paragraphs = [];
for (const f of docs)
    for (const p of fs.readFileSync(f, 'utf8').split('\n\n'))
        if (p.length)
            paragraphs.push(p + '\n\n');

for (const s of fixed.concat(mixed, paragraphs))
    console.log(Buffer.from(s, 'utf8').toString('hex') + '\t' + enc.encode(s).join(' '));
