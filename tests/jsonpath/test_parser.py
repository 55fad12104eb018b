"""The parser against kube's parser_test.go cases, node by node (kube's ``Node.String()``)."""

from __future__ import annotations

import pytest

from platform_api.jsonpath import JSONPathError
from platform_api.jsonpath.nodes import walk
from platform_api.jsonpath.parser import parse_tree, unquote

EMPTY = "NodeArray: [{0 false false} {0 false false} {0 false false}]"
OS_IMAGE = [
    "NodeList",
    "NodeField: status",
    "NodeField: nodeInfo",
    "NodeField: osImage",
    "NodeList",
]


def nodes(template: str) -> list[str]:
    return [str(node) for node in walk(parse_tree(template))[1:]]


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("hello jsonpath", ["NodeText: hello jsonpath"]),
        ("hello {.jsonpath}", ["NodeText: hello ", "NodeList", "NodeField: jsonpath"]),
        ("hello {['jsonpath']}", ["NodeText: hello ", "NodeList", "NodeField: jsonpath"]),
        ('{"{"}', ["NodeList", "NodeText: {"]),
        ("{[1:3]}", ["NodeList", "NodeArray: [{1 true false} {3 true false} {0 false false}]"]),
        ("{.book[*].author}", ["NodeList", "NodeField: book", EMPTY, "NodeField: author"]),
        ("{.bicycle.*}", ["NodeList", "NodeField: bicycle", "NodeWildcard"]),
        (
            "{[?(@.price<3)]}",
            [
                "NodeList",
                "NodeFilter: NodeList < NodeList",
                "NodeList",
                "NodeField: price",
                "NodeList",
                "NodeInt: 3",
            ],
        ),
        ("{..}", ["NodeList", "NodeRecursive"]),
        ("{..price}", ["NodeList", "NodeRecursive", "NodeField: price"]),
        ("{['book.price']}", ["NodeList", "NodeField: book", "NodeField: price"]),
        (
            "{['bicycle.price', 3, 'book.price']}",
            [
                "NodeList",
                "NodeUnion",
                "NodeList",
                "NodeField: bicycle",
                "NodeField: price",
                "NodeList",
                "NodeArray: [{3 true false} {4 true true} {0 false false}]",
                "NodeList",
                "NodeField: book",
                "NodeField: price",
            ],
        ),
        (
            "{range .items}{.name},{end}",
            [
                "NodeList",
                "NodeIdentifier: range",
                "NodeField: items",
                "NodeList",
                "NodeField: name",
                "NodeText: ,",
                "NodeList",
                "NodeIdentifier: end",
            ],
        ),
        (
            '{[?(@.status.nodeInfo.osImage == "()")]}',
            ["NodeList", "NodeFilter: NodeList == NodeList", *OS_IMAGE, "NodeText: ()"],
        ),
        (
            r'{[?(@.status.nodeInfo.osImage == "(\"\")")]}',
            ["NodeList", "NodeFilter: NodeList == NodeList", *OS_IMAGE, 'NodeText: ("")'],
        ),
        (
            '{[?(@.test == "())(")]}',
            [
                "NodeList",
                "NodeFilter: NodeList == NodeList",
                "NodeList",
                "NodeField: test",
                "NodeList",
                "NodeText: ())(",
            ],
        ),
        (
            "{[?(@.status.nodeInfo.osImage == 'Linux')]}",
            ["NodeList", "NodeFilter: NodeList == NodeList", *OS_IMAGE, "NodeText: Linux"],
        ),
        (
            '{[?(@.status.nodeInfo.osImage == "{[()]}")]}',
            ["NodeList", "NodeFilter: NodeList == NodeList", *OS_IMAGE, "NodeText: {[()]}"],
        ),
        (
            "{[?(@.status.nodeInfo.osImage == \"''\")]}",
            ["NodeList", "NodeFilter: NodeList == NodeList", *OS_IMAGE, "NodeText: ''"],
        ),
        (
            "{[?(@.status.nodeInfo.osImage == '\"\"')]}",
            ["NodeList", "NodeFilter: NodeList == NodeList", *OS_IMAGE, 'NodeText: ""'],
        ),
        (
            r"{[?(@.status.nodeInfo.osImage == '\\\'')]}",
            ["NodeList", "NodeFilter: NodeList == NodeList", *OS_IMAGE, "NodeText: \\'"],
        ),
        ("{[-5:]}", ["NodeList", "NodeArray: [{-5 true false} {0 false false} {0 false false}]"]),
        ("{[-1]}", ["NodeList", "NodeArray: [{-1 true false} {0 true true} {0 false false}]"]),
        ("{[1:-1]}", ["NodeList", "NodeArray: [{1 true false} {-1 true false} {0 false false}]"]),
        # beyond kube's table: literals, exists filters, escapes, odd corners kube accepts
        ("{true false}", ["NodeList", "NodeBool: true", "NodeBool: false"]),
        ("{1.5 -2 +3}", ["NodeList", "NodeFloat: 1.500000", "NodeInt: -2", "NodeInt: 3"]),
        ("{99999999999999999999}", ["NodeList", "NodeFloat: 100000000000000000000.000000"]),
        (
            "{[?(@.z)]}",
            [
                "NodeList",
                "NodeFilter: NodeList exists NodeList",
                "NodeList",
                "NodeField: z",
                "NodeList",
            ],
        ),
        (r"{.a\.b\\c}", ["NodeList", "NodeField: a.bc"]),
        ("{.}", ["NodeList", "NodeField: "]),
        ("{[]}", ["NodeList", "NodeArray: [{0 false false} {1 true true} {0 false false}]"]),
        ("{[::2]}", ["NodeList", "NodeArray: [{0 false false} {0 false false} {2 true false}]"]),
        ("{['a b']}", ["NodeList", "NodeField: a", "NodeIdentifier: b"]),
        ("{...name}", ["NodeList", "NodeRecursive", "NodeField: name"]),
        ("{@.a $.b}", ["NodeList", "NodeField: a", "NodeField: b"]),
        (
            "a{.b}c{.d}",
            ["NodeText: a", "NodeList", "NodeField: b", "NodeText: c", "NodeList", "NodeField: d"],
        ),
        (r'{"\x41\u00e9\101\t"}', ["NodeList", "NodeText: A\u00e9A\t"]),
        ("{}", ["NodeList"]),
        ("}", ["NodeText: }"]),
    ],
)
def test_parser(template: str, expected: list[str]) -> None:
    assert nodes(template) == expected


@pytest.mark.parametrize(
    ("template", "message"),
    [
        ("{.hello", "unclosed action"),
        ("{*}", "unrecognized character in action: U+002A '*'"),
        ("{+12.3.0}", "cannot parse number +12.3.0"),
        ("{[1}", "unterminated array"),
        ("{[?(.price]}", "unterminated filter"),
        ("{........}", "invalid multiple recursive descent"),
        (r"{\\\}", "unrecognized character in action: U+005C '\\'"),
        # beyond kube's table
        ("{.a\n}", "unclosed action"),
        ("{\t}", "unrecognized character in action: U+0009"),
        ("{{.a}}", "unrecognized character in action: U+007B '{'"),
        ("{-}", "cannot parse number -"),
        ("{\u0661}", "cannot parse number \u0661"),
        ('{"a}', "unterminated quoted string"),
        (r'{"a\\"}', "unterminated quoted string"),
        (r'{"\q"}', r'unquote string "\q" error invalid syntax'),
        (r"{'\"'}", r"""unquote string '\"' error invalid syntax"""),
        (r'{"\ud800"}', r'unquote string "\ud800" error invalid syntax'),
        (r'{"\400"}', r'unquote string "\400" error invalid syntax'),
        ('{["a.b"]}', 'invalid array index "a.b"'),
        ("{[a]}", "invalid array index a"),
        ("{[-]}", "array index - is not a number"),
        ("{[1:-]}", "array index - is not a number"),
        ("{[99999999999999999999]}", "array index 99999999999999999999 is not a number"),
        ("{[1,a]}", "invalid array index a"),
        ("{[?(@.a==1)x]}", "unclosed array expect ]"),
        ("{[?(@.a==1)", "unclosed array expect ]"),
        ("{[?(@.a==1)]", "unclosed action"),
    ],
)
def test_parse_errors(template: str, message: str) -> None:
    with pytest.raises(JSONPathError) as caught:
        parse_tree(template)
    assert str(caught.value) == message


@pytest.mark.parametrize(
    ("quoted", "text"),
    [
        ('"plain"', "plain"),
        ("'it\\'s'", "it's"),
        (r'"\a\b\f\n\r\t\v\\"', "\a\b\f\n\r\t\v\\"),
        (r'"\U0001F600"', "\U0001f600"),
        (r'"\xc3\xa9"', "\u00e9"),
        (r'"\xff"', "\ufffd"),
    ],
)
def test_unquote(quoted: str, text: str) -> None:
    assert unquote(quoted) == text


@pytest.mark.parametrize("quoted", ['"', "'a\"", r'"\x4"', r'"\'"', r'"\8"', '"a"b"'])
def test_unquote_invalid(quoted: str) -> None:
    with pytest.raises(ValueError):
        unquote(quoted)
