"""tools/notebooks/black-brown-study.ipynb runs from top to bottom, from its own folder
(as Jupyter opens it), and prints the
study's positional similarity, 0.8600013."""

import importlib.util
import os

import pytest

from conftest import SOURCE_DIR

NOTEBOOK = os.path.join(SOURCE_DIR, "tools", "notebooks", "black-brown-study.ipynb")


def test_notebook_runs_and_prints_the_study_value():
    for module in ("nbclient", "nbformat", "ipykernel"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed (python3-nbclient, python3-ipykernel)")
    import nbclient
    import nbformat

    nb = nbformat.read(NOTEBOOK, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                                     resources={"metadata": {"path": os.path.dirname(NOTEBOOK)}})
    client.execute()  # raises CellExecutionError on any error
    text = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            assert out.get("output_type") != "error", out
            text.append(out.get("text", ""))
            text.append(out.get("data", {}).get("text/plain", ""))
    printed = "".join(text)
    assert "positional similarity cos(PE[2], PE[10]) = 0.8600013" in printed
    svgs = [o for c in nb.cells for o in c.get("outputs", []) if "image/svg+xml" in o.get("data", {})]
    assert svgs, "the figures did not display inline"
