"""How libxml2's HTML tokenizer reads the source, as far as the scans before a parse need it
(`_parts`: a fragment's own head and body tags, `_quotes`: a value's quote left open, `_void`:
the void elements it does not know): what it steps over as one token, and a tag's attributes."""

from __future__ import annotations

ATTRIBUTES = r"""(?:[^>=]++|=\s*+(?:"[^"]*+"|'[^']*+')?)*+"""
"""A start tag's attributes, as HTML5 reads them: a quote opens a value only right after `=`
(`<a x"y <body>` is one tag, its attributes `x"y` and `<body`), a quoted value may hold `>`."""

SKIPPED = (
    r"<plaintext(?=[\s/>]).*"
    r"|<(script|style|textarea|title|xmp|iframe|noembed|noframes)(?=[\s/>])"
    r"(?>.*?(?:</\1(?=[\s/>])[^>]*+>?|\Z))"
    r"|<!--(?>-?>|.*?(?:--!?>|\Z))"
    r"|<[!?][^>]*+>?|</(?![a-zA-Z])[^>]*+>?"
)
"""What no tag is found inside, each to its end: a `plaintext` to the end of the text, a
raw-text element (a script's string) to its end tag, a comment (`<!-->` and `--!>` end one
too), and what libxml2 reads as one (`<![CDATA[`, `<?`, `</` and no letter: to the next `>`).
Group 1 is a raw-text element's name: a pattern built on it numbers its own groups from 2.
Compile with re.IGNORECASE | re.DOTALL."""
