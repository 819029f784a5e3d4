"""RFC 8785 (JSON Canonicalization Scheme). `json.dumps(sort_keys=True)` is not it: Python writes
`1.0` and `1e-07`, escapes non-ASCII, and sorts by code point; JCS writes numbers as ECMAScript
does and sorts member names by UTF-16 code units."""
import math

_SHORT = {0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0C: "\\f", 0x0D: "\\r", 0x22: '\\"', 0x5C: "\\\\"}


def _string(text):
    out = ['"']
    for ch in text:
        cp = ord(ch)
        if 0xD800 <= cp <= 0xDFFF:
            raise ValueError("cannot canonicalize a string with a lone surrogate")
        if cp in _SHORT:
            out.append(_SHORT[cp])
        elif cp < 0x20:
            out.append("\\u%04x" % cp)
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _number(value):
    """An IEEE-754 double as ECMAScript's Number.prototype.toString writes it."""
    value = float(value)
    if math.isnan(value) or math.isinf(value):
        raise ValueError("cannot canonicalize NaN or an infinity")
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    # repr gives the shortest digits that read back to the same double (as ECMAScript requires),
    # as "123.456", "100.0", "1e-07", "1.5e+21".
    mantissa, _, exponent = repr(abs(value)).partition("e")
    int_part, _, frac_part = mantissa.partition(".")
    digits = int_part + frac_part
    # value = 0.<digits> * 10^n
    n = len(int_part) + (int(exponent) if exponent else 0)
    stripped = digits.lstrip("0")
    n -= len(digits) - len(stripped)
    digits = stripped.rstrip("0")
    k = len(digits)
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * (-n) + digits
    e = n - 1
    exp = ("+" if e >= 0 else "-") + str(abs(e))
    if k == 1:
        return sign + digits + "e" + exp
    return sign + digits[0] + "." + digits[1:] + "e" + exp


def _utf16_key(name):
    return name.encode("utf-16-be", "surrogatepass")


def canonical_json(value):
    """The canonical JSON text of a value made of dict, list, str, int, float, bool and None."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, (int, float)):
        return _number(value)
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(canonical_json(v) for v in value) + "]"
    if isinstance(value, dict):
        for k in value:
            if not isinstance(k, str):
                raise TypeError("object member names are strings")
        keys = sorted(value, key=_utf16_key)
        return "{" + ",".join(_string(k) + ":" + canonical_json(value[k]) for k in keys) + "}"
    raise TypeError("cannot canonicalize a %s" % type(value).__name__)
