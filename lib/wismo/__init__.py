"""wismo: where should the evidence for a support question be gathered, by the model or by code?"""

import sys

__version__ = "0.1.0"

# jsonschema imports rfc3987_syntax whenever it is installed (jupyter-events' format-nongpl extra installs it), and
# that module builds an Earley parser as it is imported: about 2 s of CPU in every process that validates a run or
# executes a notebook (measured 2026-12-02). It checks only the "iri" formats, which nothing here asserts, so wismo's
# processes leave it out, as jsonschema does where it is not installed.
# None in sys.modules is how Python marks a module as not importable; typeshed types the mapping without it.
sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]
