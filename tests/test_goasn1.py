"""encoding/asn1's refusals of a request that is no DER SEQUENCE: each message is the
reference kube-apiserver v1.36's for a CertificateSigningRequest carrying those bytes
(2026-12-07)."""

from __future__ import annotations

import pytest

from platform_api.goasn1 import ASN1Error, check_struct

_PARAMS = (
    "{optional:false explicit:false application:false private:false defaultValue:<nil> "
    "tag:<nil> stringType:0 timeType:0 set:false omitEmpty:false}"
)


@pytest.mark.parametrize(
    ("der", "message"),
    [
        (b"", "asn1: syntax error: sequence truncated"),
        (b"\x30", "asn1: syntax error: truncated tag or length"),
        (b"\x30\x82\x01", "asn1: syntax error: truncated tag or length"),
        (b"\x30\x05\x01", "asn1: syntax error: data truncated"),
        (b"\x30\x84\x01\x00\x00\x00", "asn1: syntax error: data truncated"),
        (b"\x30\x80\x00\x00", "asn1: syntax error: indefinite length found (not DER)"),
        (b"\x30\x81\x05abcde", "asn1: structure error: non-minimal length"),
        (b"\x30\x82\x00\x05", "asn1: structure error: superfluous leading zeros in length"),
        (b"\x30\x85\x01\x00\x00\x00\x00", "asn1: structure error: length too large"),
        (b"\x30\x00\xff", "asn1: syntax error: sequence truncated"),
        (b"\x1f\x05\x00", "asn1: syntax error: non-minimal tag"),
        (b"\x3f\x80\x01", "asn1: syntax error: integer is not minimally encoded"),
        (b"\x3f\xff\xff\xff\xff\x7f\x00", "asn1: structure error: base 128 integer too large"),
        (b"\x3f\x9f", "asn1: syntax error: truncated base 128 integer"),
        (
            b"\x04\x03abc",
            "asn1: structure error: tags don't match (16 vs {class:0 tag:4 length:3 "
            f"isCompound:false}}) {_PARAMS} certificateRequest @2",
        ),
        (
            b"\x3f\x81\x00\x00",
            "asn1: structure error: tags don't match (16 vs {class:0 tag:128 length:0 "
            f"isCompound:true}}) {_PARAMS} certificateRequest @4",
        ),
    ],
)
def test_what_is_no_sequence_is_refused_in_go_words(der: bytes, message: str) -> None:
    with pytest.raises(ASN1Error) as caught:
        check_struct(der, "certificateRequest")
    assert str(caught.value) == message


def test_a_sequence_ends_where_its_length_says() -> None:
    assert check_struct(b"\x30\x03\x02\x01\x01\xff", "certificateRequest") == 5
    assert check_struct(b"\x30\x81\x80" + b"\x00" * 128, "certificateRequest") == 131
