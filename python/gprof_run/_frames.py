"""The shapes results come back in: pandas when it is installed, numpy arrays or plain Python otherwise.

pandas and numpy are optional and imported only when a result is built, so `import gprof_run` stays fast.
"""


class GprofRunWarning(UserWarning):
    """Something in the run was damaged or lost (the lines gprof-report prints as warnings)."""


OUTPUTS = ("auto", "pandas", "numpy", "python")


def _have(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def resolve_output(output: str) -> str:
    """"auto" -> "pandas" when pandas is installed, else "numpy" when numpy is, else "python"."""
    if output not in OUTPUTS:
        raise ValueError(f"output must be one of {', '.join(OUTPUTS)}, not {output!r}")
    if output == "auto":
        return "pandas" if _have("pandas") else "numpy" if _have("numpy") else "python"
    return output


def to_table_rows(rows, columns):
    """A report's rows: a DataFrame with the report's column order when pandas is installed, else the dicts."""
    if resolve_output("auto") != "pandas":
        return rows
    import pandas

    return pandas.DataFrame.from_records(rows, columns=columns)


# memoryview format of the extension's columns -> array.array type code of the same element size.
_TYPECODES = {"q": "q", "l": "q", "Q": "Q", "L": "Q", "i": "i", "I": "I", "H": "H", "B": "B"}


def to_columns(columns, output: str):
    """The extension's (name, memoryview, categories or None) triples as the chosen output.

    pandas: a DataFrame; categorical columns (strings, enumerations) are pandas Categoricals.
    numpy: a dict of arrays; categorical columns become object arrays of shared str objects.
    python: a dict of array.array (numbers) and lists (texts).
    """
    output = resolve_output(output)
    if output == "python":
        import array

        out = {}
        for name, data, categories in columns:
            if categories is None:
                a = array.array(_TYPECODES[data.format])
                a.frombytes(data.cast("B"))
                out[name] = a
            else:
                out[name] = [categories[c] for c in data]
        return out

    import numpy

    arrays = {}
    for name, data, categories in columns:
        values = numpy.asarray(data)  # no copy: a view of the extension's buffer, which it keeps alive
        if categories is not None and output == "numpy":
            values = numpy.asarray(categories, dtype=object)[values] if len(categories) else \
                numpy.empty(len(values), dtype=object)
        arrays[name] = (values, categories)
    if output == "numpy":
        return {name: values for name, (values, _) in arrays.items()}

    import pandas

    frame = {}
    for name, (values, categories) in arrays.items():
        frame[name] = values if categories is None else pandas.Categorical.from_codes(values, categories=categories)
    return pandas.DataFrame(frame, copy=False)
