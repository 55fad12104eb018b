"""Character classes of Go's regexp syntax: Perl and POSIX groups, Unicode tables.

Go's ``\\p{...}`` accepts Unicode general categories, their long aliases and scripts.
Categories are computed exactly from ``unicodedata``; Python has no script property, so a
script is approximated by the characters whose Unicode name starts with the script's name.
"""

from __future__ import annotations

import sys
import unicodedata
from collections.abc import Callable
from functools import cache

Ranges = list[tuple[int, int]]
MAX_RUNE = sys.maxunicode
_WORD = [(48, 57), (65, 90), (95, 95), (97, 122)]
PERL = {
    "d": [(48, 57)],
    "s": [(9, 10), (12, 13), (32, 32)],
    "w": _WORD,
}
POSIX = {
    "alnum": [(48, 57), (65, 90), (97, 122)],
    "alpha": [(65, 90), (97, 122)],
    "ascii": [(0, 127)],
    "blank": [(9, 9), (32, 32)],
    "cntrl": [(0, 31), (127, 127)],
    "digit": [(48, 57)],
    "graph": [(33, 126)],
    "lower": [(97, 122)],
    "print": [(32, 126)],
    "punct": [(33, 47), (58, 64), (91, 96), (123, 126)],
    "space": [(9, 13), (32, 32)],
    "upper": [(65, 90)],
    "word": _WORD,
    "xdigit": [(48, 57), (65, 70), (97, 102)],
}
_CATEGORY_NAMES = (
    "C Cc Cf Cn Co Cs L Ll Lm Lo Lt Lu M Mc Me Mn N Nd Nl No P Pc Pd Pe Pf Pi Po Ps S Sc "
    "Sk Sm So Z Zl Zp Zs"
)
_CATEGORIES = frozenset(_CATEGORY_NAMES.split())
_CATEGORY_ALIASES = {
    "Casedletter": "LC", "Closepunctuation": "Pe", "Combiningmark": "M",
    "Connectorpunctuation": "Pc", "Control": "Cc", "Currencysymbol": "Sc",
    "Dashpunctuation": "Pd", "Decimalnumber": "Nd", "Enclosingmark": "Me",
    "Finalpunctuation": "Pf", "Format": "Cf", "Initialpunctuation": "Pi", "Letter": "L",
    "Letternumber": "Nl", "Lineseparator": "Zl", "Lowercaseletter": "Ll", "Mark": "M",
    "Mathsymbol": "Sm", "Modifierletter": "Lm", "Modifiersymbol": "Sk",
    "Nonspacingmark": "Mn", "Number": "N", "Openpunctuation": "Ps", "Other": "C",
    "Otherletter": "Lo", "Othernumber": "No", "Otherpunctuation": "Po", "Othersymbol": "So",
    "Paragraphseparator": "Zp", "Privateuse": "Co", "Punctuation": "P", "Separator": "Z",
    "Spaceseparator": "Zs", "Spacingmark": "Mc", "Surrogate": "Cs", "Symbol": "S",
    "Titlecaseletter": "Lt", "Unassigned": "Cn", "Uppercaseletter": "Lu", "Cntrl": "Cc",
    "Digit": "Nd", "Punct": "P",
}  # fmt: skip
_SCRIPT_NAMES = (
    "Adlam Ahom Anatolian_Hieroglyphs Arabic Armenian Avestan Balinese Bamum Bassa_Vah "
    "Batak Bengali Beria_Erfe Bhaiksuki Bopomofo Brahmi Braille Buginese Buhid "
    "Canadian_Aboriginal Carian Caucasian_Albanian Chakma Cham Cherokee Chorasmian Common "
    "Coptic Cuneiform Cypriot Cypro_Minoan Cyrillic Deseret Devanagari Dives_Akuru Dogra "
    "Duployan Egyptian_Hieroglyphs Elbasan Elymaic Ethiopic Garay Georgian Glagolitic "
    "Gothic Grantha Greek Gujarati Gunjala_Gondi Gurmukhi Gurung_Khema Han Hangul "
    "Hanifi_Rohingya Hanunoo Hatran Hebrew Hiragana Imperial_Aramaic Inherited "
    "Inscriptional_Pahlavi Inscriptional_Parthian Javanese Kaithi Kannada Katakana Kawi "
    "Kayah_Li Kharoshthi Khitan_Small_Script Khmer Khojki Khudawadi Kirat_Rai Lao Latin "
    "Lepcha Limbu Linear_A Linear_B Lisu Lycian Lydian Mahajani Makasar Malayalam Mandaic "
    "Manichaean Marchen Masaram_Gondi Medefaidrin Meetei_Mayek Mende_Kikakui "
    "Meroitic_Cursive Meroitic_Hieroglyphs Miao Modi Mongolian Mro Multani Myanmar "
    "Nabataean Nag_Mundari Nandinagari New_Tai_Lue Newa Nko Nushu Nyiakeng_Puachue_Hmong "
    "Ogham Ol_Chiki Ol_Onal Old_Hungarian Old_Italic Old_North_Arabian Old_Permic "
    "Old_Persian Old_Sogdian Old_South_Arabian Old_Turkic Old_Uyghur Oriya Osage Osmanya "
    "Pahawh_Hmong Palmyrene Pau_Cin_Hau Phags_Pa Phoenician Psalter_Pahlavi Rejang Runic "
    "Samaritan Saurashtra Sharada Shavian Siddham Sidetic SignWriting Sinhala Sogdian "
    "Sora_Sompeng Soyombo Sundanese Sunuwar Syloti_Nagri Syriac Tagalog Tagbanwa Tai_Le "
    "Tai_Tham Tai_Viet Tai_Yo Takri Tamil Tangsa Tangut Telugu Thaana Thai Tibetan "
    "Tifinagh Tirhuta Todhri Tolong_Siki Toto Tulu_Tigalari Ugaritic Vai Vithkuqi Wancho "
    "Warang_Citi Yezidi Yi Zanabazar_Square"
)
_SCRIPTS = frozenset(_SCRIPT_NAMES.split())
_SCRIPT_NAME_PREFIX = {"Han": ("CJK UNIFIED IDEOGRAPH", "CJK COMPATIBILITY IDEOGRAPH")}


def canonical(name: str) -> str:
    out = [c for c in name if c not in "_- "]
    return "".join(c.upper() if i == 0 else c.lower() for i, c in enumerate(out))


@cache
def category_ranges(category: str) -> tuple[tuple[int, int], ...]:
    def member(c: int) -> bool:
        cat = unicodedata.category(chr(c))
        if category == "LC":
            return cat in ("Lu", "Ll", "Lt")
        return cat == category or (len(category) == 1 and cat[0] == category)

    return tuple(collect(member))


@cache
def script_ranges(script: str) -> tuple[tuple[int, int], ...]:
    prefixes = _SCRIPT_NAME_PREFIX.get(script, (script.replace("_", " ").upper() + " ",))
    return tuple(collect(lambda c: unicodedata.name(chr(c), "").startswith(prefixes)))


def collect(member: Callable[[int], bool]) -> Ranges:
    ranges: Ranges = []
    start = -1
    for c in range(MAX_RUNE + 1):
        if member(c):
            if start < 0:
                start = c
        elif start >= 0:
            ranges.append((start, c - 1))
            start = -1
    if start >= 0:
        ranges.append((start, MAX_RUNE))
    return ranges


def negate_ranges(ranges: Ranges) -> Ranges:
    out: Ranges = []
    nxt = 0
    for lo, hi in sorted(ranges):
        if lo > nxt:
            out.append((nxt, lo - 1))
        nxt = max(nxt, hi + 1)
    if nxt <= MAX_RUNE:
        out.append((nxt, MAX_RUNE))
    return out


def unicode_table(name: str) -> Ranges | None:
    key = canonical(name)
    if key == "Any":
        return [(0, MAX_RUNE)]
    if key == "Assigned":
        return negate_ranges(list(category_ranges("Cn")))
    if key == "Ascii":
        return [(0, 127)]
    if key == "Lc":
        return list(category_ranges("LC"))
    if key in _CATEGORIES:
        return list(category_ranges(key))
    if key in _CATEGORY_ALIASES:
        return list(category_ranges(_CATEGORY_ALIASES[key]))
    for script in _SCRIPTS:
        if canonical(script) == key:
            return list(script_ranges(script))
    return None
