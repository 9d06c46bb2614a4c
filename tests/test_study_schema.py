"""The study file's JSON Schema (studies/schema.py): a valid Draft 2020-12 schema, the one declaration of every
table's keys, met by every study file shipped, and printed by `wismo study schema` for editors."""

from __future__ import annotations

import json
import subprocess
import tomllib

import jsonschema
import pytest

from commands import wismo_argv
from wismo.core.paths import REPO_ROOT
from wismo.studies import declaration, schema
from wismo.studies.problems import Problems

SHIPPED = sorted(
    p for p in [*(REPO_ROOT / "data" / "studies").glob("*.toml"), *(REPO_ROOT / "tests" / "studies").rglob("*.toml")]
)


def test_the_schema_is_a_valid_draft_2020_12_schema():
    jsonschema.Draft202012Validator.check_schema(schema.document())


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.relative_to(REPO_ROOT).as_posix())
def test_every_shipped_study_file_meets_the_schema(path):
    raw = tomllib.loads(path.read_text(encoding="utf-8"))
    r = Problems(path)
    schema.check(r, raw)
    assert r.problems == []
    assert list(jsonschema.Draft202012Validator(schema.document()).iter_errors(raw)) == []


STUDY = """title = "t"
question = "Where is {orderId}?"
[designs.granular]
serve = "granular"
[designs.focused]
serve = "focused"
[[cases]]
label = "one"
orderId = "ORD-1004"
"""


@pytest.mark.parametrize(
    "added, said",
    [
        (("title", "novel = 1\ntitle"), 'top level: unknown key "novel"; the keys are title, question'),
        (
            ('serve = "focused"', 'serve = "focused"\nnovel = 1'),
            'design "focused": unknown key "novel"; the keys are serve',
        ),
    ],
)
def test_a_key_the_schema_does_not_declare_is_refused(tmp_path, added, said):
    # The keys a study reads are the schema's: a key the schema does not declare is refused where it stands.
    path = tmp_path / "study.toml"
    path.write_text(STUDY, encoding="utf-8")
    assert list(declaration.load(path).designs) == ["granular", "focused"]  # as written, it loads
    path.write_text(STUDY.replace(*added, 1), encoding="utf-8")
    with pytest.raises(declaration.StudyInvalid) as raised:
        declaration.load(path)
    assert len(raised.value.problems) == 1 and raised.value.problems[0].startswith(said), raised.value.problems


def test_wismo_study_schema_prints_the_schema():
    done = subprocess.run(wismo_argv("study", "schema"), capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    assert printed == schema.document()
    assert printed["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert set(printed["properties"]["designs"]["additionalProperties"]["properties"]) >= {"serve", "command", "url"}
