"""Characters that show nothing: one definition for the sanitiser (``sanitize.py``, which removes
them from every text that enters) and the reader (``text/normalize.py``, which reads a text
without them). Listed, not derived from ``unicodedata`` at import (0.4 s, measured); no imports,
so the text layer reads it without loading pydantic."""

#: Format characters (Unicode category Cf) that show nothing: the soft hyphen, zero-width spaces,
#: joiners and non-joiners, direction marks, bidi embeddings, overrides and isolates, the word
#: joiner and invisible operators, the BOM, interlinear annotation marks, shorthand format
#: controls, musical formatting, tag characters. A character-class body.
INVISIBLE_BMP = "\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb"
#: Those above U+FFFF, apart: a class holding them is read range by range at every character
#: (~4× the cost of one without them, measured), so a search looks for them only in a text that
#: has a character above U+FFFF at all.
INVISIBLE_ASTRAL = "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f"
INVISIBLE = INVISIBLE_BMP + INVISIBLE_ASTRAL
#: Format characters that do show (the prepended marks of Arabic, Syriac, Kaithi and Egyptian
#: numbers and controls): kept in text, left out when its facts are read.
SHOWN_FORMAT = "\u0600-\u0605\u06dd\u070f\u0890-\u0891\u08e2\U000110bd\U000110cd\U00013430-\U00013438"
