"""What follows a whole document's root element: comments and processing instructions, which
lxml's copy of the tree reverses, and whitespace, which the parser drops."""

from __future__ import annotations

import copy
import re
from typing import Any

from lxml import etree

_SPACES = " \t\n\f\r"  # HTML's (XML's but for the form feed, which it refuses)
_HTML_END = re.compile(r"</html\s*>\Z", re.IGNORECASE)


def copy_tree(root: Any) -> Any:
    """A deep copy of the parsed tree to rebuild in (a Markup may be rebuilt more than once).
    lxml copies the comments and processing instructions after a document's root element in
    reverse order: they are put back in the original's, matched by content."""
    copied = copy.deepcopy(root)
    if not isinstance(root, etree._ElementTree):
        return copied
    after = list(root.getroot().itersiblings())
    if len(after) < 2:
        return copied
    left = list(copied.getroot().itersiblings())
    at = copied.getroot()
    for node in after:
        same = next(c for c in left if _same_node(c, node))
        left.remove(same)
        at.addnext(same)
        at = same
    return copied


def _same_node(a: Any, b: Any) -> bool:
    return bool(
        a.tag is b.tag
        and a.text == b.text
        and getattr(a, "target", None) == getattr(b, "target", None)
    )


def html_trail(source: str, top: Any) -> str:
    """The whitespace a whole HTML document ends with when it follows the root element's end
    tag (or comments after it), where the parser drops it; "" when the tree holds it (the
    document's end tags are left out, or the `</html>` is text of a script left open)."""
    end = len(source.rstrip(_SPACES))
    if end == len(source):
        return ""
    if top.getnext() is None:  # no comment after the root: is `</html>` the text's end?
        if _HTML_END.search(source, max(0, end - 64), end) is None:
            return ""
        node = top  # the last text in document order: its end is the text's
        while len(node) and node[-1].tail is None:
            node = node[-1]
        last = node[-1].tail if len(node) else node.text
        if last and "</html" in last.lower():
            return ""
    return source[end:]


def xml_trail(text: str) -> str:
    """The whitespace an XML document ends with: only comments, processing instructions and
    spaces follow its root, and the parser drops the spaces (a file's last newline)."""
    return text[len(text.rstrip(_SPACES)) :]
