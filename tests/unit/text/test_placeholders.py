from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dragoman.text.placeholders import _MAYBE, _PLACEHOLDER, mask

KINDS = [
    "%(name)s",
    "%1$s",
    "%s",
    "%d",
    "%-5.2f",
    "{count}",
    "{0}",
    "{{var}}",
    "${var}",
    ":smile:",
    "[X1X]",
    "<0>",
    "https://example.com/a?b=1&c=2",
    "someone@example.org",
    "`make test`",
]


@pytest.mark.parametrize("token", KINDS)
def test_each_kind_is_masked_and_restored(token: str) -> None:
    text = f"Open {token} now, please."
    m = mask(text)
    assert token not in m.text and m.originals == (token,)
    assert m.text == "Open {1} now, please."
    assert m.unmask("Ouvrez {1} maintenant, s'il vous plaît.") == (
        f"Ouvrez {token} maintenant, s'il vous plaît.",
        [],
    )


def test_not_placeholders() -> None:
    for text in ("50% off today", "100% sure", "a {b c} d", "time: 10:30"):
        assert mask(text).originals == (), text


def test_lost_repeated_and_invented_tokens_are_repaired() -> None:
    m = mask("Hello %(name)s, you have {count} new messages")
    out, repairs = m.unmask("Bonjour {1}, vous avez des messages")
    assert out.count("{count}") == 1 and out.startswith("Bonjour %(name)s,")
    assert repairs == ["lost placeholder '{count}' put back"]
    out, repairs = m.unmask("Bonjour {1} {1} {7}, vous avez {2} messages")
    assert out == "Bonjour %(name)s, vous avez {count} messages"
    assert len(repairs) == 2
    out, _ = m.unmask("")
    assert out.count("%(name)s") == 1 and out.count("{count}") == 1


def test_text_holding_nuls_and_digits_of_its_own_comes_back_unchanged() -> None:
    """Restored tokens are marked with a character the reply does not hold: a NUL-digits-NUL
    run in the text itself is neither taken for one (IndexError) nor replaced by one."""
    for text in ("{a} hi \x0099\x00", "{a} {b} hi \x001\x00", "%s \ue000" + "1\ue000"):
        m = mask(text)
        assert m.unmask(m.text) == (text, [])
    m = mask("{a} hi \x001\x00")
    out, repairs = m.unmask("salut \x001\x00")
    assert out.count("{a}") == 1 and "\x001\x00" in out
    assert repairs == ["lost placeholder '{a}' put back"]


@settings(max_examples=300)
@given(
    st.lists(
        st.one_of(st.sampled_from(KINDS), st.text(alphabet="ab.+-_@:/%{}[]<>`w1 X", max_size=8)),
        max_size=6,
    )
)
def test_the_quick_check_never_hides_a_placeholder(parts: list[str]) -> None:
    """`mask` skips the full pattern when the quick check finds nothing: it must find
    something in every text the full pattern would match."""
    text = "".join(parts)
    assert bool(_PLACEHOLDER.search(text)) <= bool(_MAYBE.search(text))
    assert mask(text).originals == tuple(_PLACEHOLDER.findall(text))
