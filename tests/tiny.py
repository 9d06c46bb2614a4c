"""Small real notebooks for papermill, written into a test's folder: the build's shape (a title, a parameters cell
taking output_dir, a cell writing the notebook's JSON result) and then any code."""

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook


def tiny_notebook(path, figures=None, then=""):
    """A real notebook for papermill: a parameters cell, one that writes its JSON result, then the code `then`."""
    nb = new_notebook(
        cells=[
            new_markdown_cell(f"# Tiny {path.stem}"),
            new_code_cell('output_dir = "outputs"', metadata={"tags": ["parameters"]}),
            new_code_cell(
                "import json, pathlib\npathlib.Path(output_dir, "
                f"'{path.stem}.json').write_text(json.dumps({{'n': 3, 'of': 4}}))"
            ),
            *([new_code_cell(then)] if then else []),
        ]
    )
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["wismo"] = {"summary": f"{path.stem} in one line.", **({"figures": figures} if figures else {})}
    nbformat.write(nb, path)
    return path
