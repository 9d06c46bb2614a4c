"""Function definitions counted completely (openai-harmony's rendering) beside the cookbook's top-level count."""

import subprocess
import sys
import textwrap

import pytest

from wismo.accounting import tokens
from wismo.accounting.tokens import definitions, framing
from wismo.mcp.servers import granular

# create_entities exactly as the MCP reference memory server declares it (modelcontextprotocol/servers,
# src/memory/index.ts, ListToolsRequestSchema handler, commit 52ab84cd "Improve memory server schema validation").
CREATE_ENTITIES = {
    "name": "create_entities",
    "description": "Create multiple new entities in the knowledge graph",
    "inputSchema": {
        "type": "object",
        "properties": {
            "entities": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "description": "The name of the entity"},
                        "entityType": {"type": "string", "description": "The type of the entity"},
                        "observations": {
                            "type": "array",
                            "items": {"type": "string"},
                            "description": "An array of observation contents associated with the entity",
                        },
                    },
                    "required": ["name", "entityType", "observations"],
                    "additionalProperties": False,
                },
            },
        },
        "required": ["entities"],
        "additionalProperties": False,
    },
}

# Arrays of objects, enums, anyOf, a default and a $ref: what the cookbook's count leaves out.
NESTED = {
    "type": "function",
    "name": "update_shipment",
    "description": "Update one shipment's lines and carrier.",
    "parameters": {
        "type": "object",
        "$defs": {"Address": {"type": "object", "properties": {"city": {"type": "string"}}}},
        "properties": {
            "shipmentId": {"type": "string", "description": "The shipment ID, for example TRK-1004-A."},
            "mode": {"type": "string", "enum": ["ground", "air", "sea"], "description": "How it travels."},
            "lines": {
                "type": "array",
                "description": "The lines to ship.",
                "items": {
                    "type": "object",
                    "properties": {
                        "sku": {"type": "string", "description": "Stock keeping unit."},
                        "quantity": {"type": "integer", "description": "Units on this line."},
                        "condition": {"type": "string", "enum": ["new", "refurbished"]},
                    },
                    "required": ["sku", "quantity"],
                },
            },
            "carrier": {"anyOf": [{"type": "string"}, {"type": "null"}], "description": "The carrier, if chosen."},
            "destination": {"$ref": "#/$defs/Address"},
            "priority": {"type": "integer", "default": 3},
        },
        "required": ["shipmentId", "lines"],
    },
}

NESTED_RENDERED = """\
// Update one shipment's lines and carrier.
type update_shipment = (_: {
// The shipment ID, for example TRK-1004-A.
shipmentId: string,
// How it travels.
mode?: "ground" | "air" | "sea",
// The lines to ship.
lines: {
    // Stock keeping unit.
    sku: string,
    // Units on this line.
    quantity: number,
    condition?: "new" | "refurbished",
    }[],
// The carrier, if chosen.
carrier?: any,
destination?: any,
priority?: number, // default: 3
}) => any;
"""


def parts(count, method):
    """One method's part figures of a one-tool count, without the labels."""
    figures = count.as_dict()["tools"][0][method]
    return {k: figures[k] for k in ("total", "name", "description", "parameters", "overhead")}


def test_create_entities_counts_its_nested_fields_where_the_cookbook_does_not():
    function = tokens.mcp_tool_to_function(CREATE_ENTITIES)
    count = definitions.count_definitions([function])
    assert parts(count, "cookbook") == {"total": 28, "name": 2, "description": 8, "parameters": 10, "overhead": 8}
    assert parts(count, "harmony") == {"total": 71, "name": 2, "description": 10, "parameters": 53, "overhead": 6}
    whole = count.as_dict()
    assert (whole["harmony"]["total"], whole["harmony"]["frame"]) == (87, 16)
    assert (whole["cookbook"]["total"], whole["cookbook"]["frame"]) == (40, 12)
    rendered = definitions.render([function])
    for nested in ("    // The name of the entity\n    name: string,", "observations: string[],", "}[],"):
        assert nested in rendered


def test_a_nested_schema_renders_arrays_of_objects_enums_and_defaults():
    comment, opening, params = definitions.harmony_block(NESTED)
    assert comment + opening + params + " => any;\n" == NESTED_RENDERED
    count = definitions.count_definitions([NESTED])
    assert parts(count, "harmony") == {"total": 127, "name": 3, "description": 9, "parameters": 109, "overhead": 6}
    # The cookbook reads top-level names, types, descriptions and enums only.
    assert parts(count, "cookbook") == {"total": 89, "name": 3, "description": 7, "parameters": 71, "overhead": 8}


def test_every_figure_carries_its_method_and_encoding():
    whole = definitions.count_definitions([NESTED], "o200k_base").as_dict()
    for figures in (whole["harmony"], whole["cookbook"], whole["tools"][0]["harmony"], whole["tools"][0]["cookbook"]):
        assert figures["encoding"] == "o200k_base" and figures["label"] == tokens.LABEL
    assert whole["harmony"]["method"] == definitions.HARMONY_METHOD
    assert whole["cookbook"]["method"] == tokens.COOKBOOK_GPT4O.name


def test_the_frame_is_the_same_for_one_tool_or_many():
    # Blocks add up: whatever the number of tools, the whole is the tools' sum plus the same namespace frame.
    functions = [
        framing.csharp_function(t.to_mcp().model_dump(by_alias=True, exclude_none=True)) for t in granular.TOOLS
    ]
    frames = {definitions.count_definitions(functions[:n]).as_dict()["harmony"]["frame"] for n in range(1, 5)}
    assert frames == {16}


def test_the_package_renders_its_documented_example():
    # docs/format.md of openai/harmony 0.0.8, the developer message of its "complete input example".
    weather = {
        "type": "object",
        "properties": {
            "location": {"type": "string", "description": "The city and state, e.g. San Francisco, CA"},
            "format": {"type": "string", "enum": ["celsius", "fahrenheit"], "default": "celsius"},
        },
        "required": ["location"],
    }
    several = {
        "type": "object",
        "properties": {
            "locations": {
                "type": "array",
                "items": {"type": "string"},
                "description": 'List of city and state, e.g. ["San Francisco, CA", "New York, NY"]',
            },
            "format": {"type": "string", "enum": ["celsius", "fahrenheit"], "default": "celsius"},
        },
        "required": ["locations"],
    }
    functions = [
        {"name": "get_location", "description": "Gets the location of the user."},
        {
            "name": "get_current_weather",
            "description": "Gets the current weather in the provided location.",
            "parameters": weather,
        },
        {
            "name": "get_multiple_weathers",
            "description": "Gets the current weather in the provided list of locations.",
            "parameters": several,
        },
    ]
    assert (
        definitions.render(functions)
        == "<|start|>developer<|message|>"
        + textwrap.dedent("""\
        # Tools

        ## functions

        namespace functions {

        // Gets the location of the user.
        type get_location = () => any;

        // Gets the current weather in the provided location.
        type get_current_weather = (_: {
        // The city and state, e.g. San Francisco, CA
        location: string,
        format?: "celsius" | "fahrenheit", // default: celsius
        }) => any;

        // Gets the current weather in the provided list of locations.
        type get_multiple_weathers = (_: {
        // List of city and state, e.g. ["San Francisco, CA", "New York, NY"]
        locations: string[],
        format?: "celsius" | "fahrenheit", // default: celsius
        }) => any;

        } // namespace functions""")
        + "<|end|>"
    )


def test_harmony_loads_offline_and_leaves_no_variable_behind(tmp_path):
    script = textwrap.dedent("""
        import os
        from wismo.accounting.tokens import definitions
        definitions.harmony_encoding()
        counted = len(definitions.render_tokens([{"name": "f", "description": "d"}]))
        print(os.environ.get("TIKTOKEN_ENCODINGS_BASE"), counted)
    """)
    # An empty home, no cache and no proxy: the package can only read what wismo hands it.
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "TIKTOKEN_CACHE_DIR": str(tmp_path / "cache"),
        "TMPDIR": str(tmp_path),
    }
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["None", "26"]
    assert not any(p.name.startswith("wismo-harmony-") for p in tmp_path.iterdir())


def test_a_missing_package_says_what_to_do(monkeypatch):
    monkeypatch.setitem(sys.modules, "openai_harmony", None)  # makes the import fail
    definitions.harmony_encoding.cache_clear()
    try:
        with pytest.raises(
            tokens.OfflineEncodingError,
            match=r"openai-harmony is not installed; `make setup` installs the pinned openai-harmony==0.0.8",
        ):
            definitions.harmony_encoding()
    finally:
        definitions.harmony_encoding.cache_clear()


def test_an_unexpected_rendering_is_reported(monkeypatch):
    monkeypatch.setattr(definitions, "render", lambda functions: "<|start|>developer<|message|># Tools<|end|>")
    with pytest.raises(ValueError, match="openai-harmony==0.0.8 rendered f in an unexpected form"):
        definitions.harmony_block({"name": "f", "description": "d"})
