"""The user's variables, read for the agent (and the composer's ``@`` mentions).

Runs on a thread of the kernel process, never through the kernel's shell queue, so
it answers while a cell runs. Every value is the user's object: its ``repr``, its
``len`` and pandas' ``describe`` run under ``bounded`` deadlines, and everything
returned is cut to size. Reading a dict from another thread while the main thread
runs is safe in CPython: copying ``user_ns``'s items happens under the GIL.
"""

from __future__ import annotations

import inspect
import reprlib
import sys
import types
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any, TypedDict

from ..wire.clip import clip
from . import bounded

MAX_ENTRIES = 200
PREVIEW_CHARS = 200
INSPECT_CHARS = 20_000
VALUE_SECONDS = 0.5  # one value's preview
LIST_SECONDS = 2.0  # the whole listing
SECTION_SECONDS = 2.0  # one section of an inspection (head, describe, ...)
# Inspect at most this many elements of an array for min / max / mean.
SAMPLE = 100_000
# IPython's own names that are not in user_ns_hidden when a kernel starts.
_MISSING = object()
_INTERNAL = frozenset({"In", "Out", "exit", "quit", "get_ipython", "open"})


class Variable(TypedDict):
    name: str
    type: str
    shape: str | None  # "(1000, 3)", "len 12"
    dtype: str | None
    size: int | None  # approximate bytes
    preview: str


class Listing(TypedDict):
    variables: list[Variable]
    total: int  # user variables in the namespace
    omitted: int  # of those, not listed (over the limit)
    note: str | None


def user_namespace() -> dict[str, Any]:
    """The IPython user namespace of this process ({} outside IPython)."""
    shell = ipython_shell()
    return shell.user_ns if shell is not None else {}


def ipython_shell() -> Any:
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return None
    return ipython.get_ipython()


def startup_names() -> Mapping[str, Any]:
    """What IPython put in the user namespace when the kernel started ({} outside IPython)."""
    hidden: Mapping[str, Any] = getattr(ipython_shell(), "user_ns_hidden", {})
    return hidden


def hidden_by(name: str, value: Any, startup: Mapping[str, Any]) -> str | None:
    """The rule by which ``list_variables`` leaves ``name`` out (``inspect_variable``
    follows it too); None for the user's own names. ``startup``: ``startup_names()``."""
    if name.startswith("_"):
        return "names starting with _ (private names, __builtins__, IPython's _ih, _oh, _1...)"
    if name in _INTERNAL:
        return f"IPython's own names ({', '.join(sorted(_INTERNAL))})"
    if name in startup and startup[name] is value:
        return "the names IPython put in the namespace when the kernel started"
    if issubclass(type(value), types.ModuleType):
        return "modules (imports)"
    if _imported_code(value):
        return "classes and functions imported from modules (from x import Chat)"
    if _is_chat(value):
        return "the notebook's chats (Chat objects)"
    return None


# What defines a class or function: code of this notebook is in __main__.
_CODE_TYPES = (type, types.FunctionType, types.BuiltinFunctionType)


def _imported_code(value: Any) -> bool:
    """A class or function defined in a module, not in the notebook (``from x import y``).

    Reads ``__module__`` of a class or function only, which runs none of the user's code.
    """
    if not isinstance(value, _CODE_TYPES):
        return False
    module = getattr(value, "__module__", None)
    return isinstance(module, str) and module != "__main__"


def _is_chat(value: Any) -> bool:
    # By the type's module, so this module need not import the kernel's Chat (nor anywidget).
    return any(
        cls.__module__ == "acp_notebook.kernel.chat" and cls.__qualname__ == "Chat"
        for cls in type(value).__mro__
    )


def user_variables(namespace: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """The user's own names: none ``hidden_by`` a rule, sorted."""
    startup = startup_names()
    items = list(namespace.items())  # one C-level copy: safe while the main thread runs
    return sorted(
        (name, value)
        for name, value in items
        if isinstance(name, str) and hidden_by(name, value, startup) is None
    )


def type_name(value: Any) -> str:
    cls = type(value)
    module = cls.__module__
    if module == "builtins":
        return cls.__qualname__
    # pandas.core.frame.DataFrame -> pandas.DataFrame: the name people write.
    return f"{module.split('.')[0]}.{cls.__qualname__}"


def _module_of(value: Any) -> str:
    return type(value).__module__.split(".")[0]


def _short_repr(limit: int) -> reprlib.Repr:
    short = reprlib.Repr()
    short.maxstring = short.maxother = limit
    short.maxlist = short.maxtuple = short.maxset = short.maxdict = 8
    short.maxlevel = 2
    return short


def describe(name: str, value: Any, preview_chars: int = PREVIEW_CHARS) -> Variable:
    """One variable's entry. Calls into the value: run it under a deadline."""
    shape: str | None = None
    dtype: str | None = None
    size: int | None = None
    module, kind = _module_of(value), type(value).__name__
    if isinstance(value, (str, bytes, bytearray)):
        shape = f"len {len(value)}"
        preview = repr(value[:preview_chars])  # never the whole gigabyte
        size = sys.getsizeof(value)
    elif module == "numpy" and hasattr(value, "shape") and hasattr(value, "dtype"):
        shape, dtype = str(tuple(value.shape)), str(value.dtype)
        size = int(getattr(value, "nbytes", 0)) or None
        np = sys.modules["numpy"]
        preview = np.array2string(value.ravel()[:20], threshold=20, edgeitems=3)
    elif module in ("pandas", "polars") and kind == "DataFrame":
        shape = str(value.shape)
        if module == "pandas":
            size = int(value.memory_usage(index=True, deep=False).sum())
            columns = value.dtypes.items()
        else:
            size, columns = int(value.estimated_size()), value.schema.items()
        preview = "columns: " + ", ".join(f"{c} ({t})" for c, t in list(columns)[:20])
    elif module in ("pandas", "polars") and kind == "Series":
        shape, dtype = str(value.shape), str(value.dtype)
        if module == "pandas":
            size = int(value.memory_usage(index=True, deep=False))
        else:
            size = int(value.estimated_size())
        preview = _short_repr(preview_chars).repr(value.head(5).to_list())
    elif isinstance(value, (list, tuple, set, frozenset, dict)):
        shape = f"len {len(value)}"
        size = sys.getsizeof(value)
        preview = _short_repr(preview_chars).repr(value)
    elif isinstance(value, (types.FunctionType, type)):
        try:
            signature = str(inspect.signature(value))
        except (TypeError, ValueError):
            signature = "(...)"
        preview = f"{getattr(value, '__qualname__', name)}{signature}"
    else:
        if isinstance(value, (int, float, complex, bool)) or value is None:
            size = sys.getsizeof(value)
        preview = repr(value)
    return {
        "name": name,
        "type": type_name(value),
        "shape": shape,
        "dtype": dtype,
        "size": size,
        "preview": clip(preview.replace("\n", " "), preview_chars),
    }


def list_variables() -> Listing:
    """The user's variables with a bounded preview of each (the first ``MAX_ENTRIES`` by
    name). Safe to call from any thread; returns within about ``LIST_SECONDS`` whatever
    the values do."""
    names = user_variables(user_namespace())
    shown = names[:MAX_ENTRIES]
    results = bounded.map_bounded(lambda item: describe(*item), shown, VALUE_SECONDS, LIST_SECONDS)
    variables: list[Variable] = []
    for (name, value), result in zip(shown, results, strict=True):
        if not isinstance(result, dict):  # it raised, timed out or was skipped: say which
            result = {
                "name": name,
                "type": type_name(value),
                "shape": None,
                "dtype": None,
                "size": None,
                "preview": repr(result),
            }
        variables.append(result)
    omitted = len(names) - len(shown)
    note = None
    if omitted:
        note = f"{omitted} more variables not listed (first {len(shown)} by name shown)"
    return {"variables": variables, "total": len(names), "omitted": omitted, "note": note}


def _human_bytes(size: int) -> str:
    value = float(size)
    for unit in ("B", "KB", "MB"):
        if value < 1024:
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GB"


def format_listing(listing: Listing) -> str:
    """The listing as text for the agent: one line per variable."""
    lines = []
    for v in listing["variables"]:
        facts = [v["type"]]
        facts += [f for f in (v["shape"], v["dtype"] and f"dtype {v['dtype']}") if f]
        if v["size"] is not None:
            facts.append(f"~{_human_bytes(v['size'])}")
        lines.append(f"{v['name']}: {', '.join(facts)} = {v['preview']}")
    if not lines:
        lines.append("(no user variables)")
    if listing["note"]:
        lines.append(f"[{listing['note']}]")
    return "\n".join(lines)


# ------------------------------------------------------------ inspect


def _sections(value: Any) -> list[tuple[str, Callable[[], str]]]:
    """What to say about a value, section by section; each runs under its own deadline."""
    module, kind = _module_of(value), type(value).__name__
    if module == "pandas" and kind == "DataFrame":
        return [
            ("shape", lambda: str(value.shape)),
            (
                "columns",
                lambda: "\n".join(f"{c}: {t}" for c, t in list(value.dtypes.items())[:200]),
            ),
            ("null counts", lambda: value.isna().sum().head(200).to_string()),
            ("head", lambda: value.head(5).to_string(max_colwidth=40, max_cols=30)),
            ("describe", lambda: value.describe().to_string(max_cols=30)),
        ]
    if module == "pandas" and kind == "Series":
        return [
            ("shape", lambda: f"{value.shape}, dtype {value.dtype}, name {value.name!r}"),
            ("null count", lambda: str(int(value.isna().sum()))),
            ("head", lambda: value.head(10).to_string()),
            ("describe", lambda: value.describe().to_string()),
        ]
    if module == "polars" and kind == "DataFrame":
        return [
            ("shape", lambda: str(value.shape)),
            ("schema", lambda: "\n".join(f"{c}: {t}" for c, t in list(value.schema.items())[:200])),
            ("null counts", lambda: str(value.null_count())),
            ("head", lambda: str(value.head(5))),
            ("describe", lambda: str(value.describe())),
        ]
    if module == "numpy" and hasattr(value, "shape") and hasattr(value, "dtype"):
        np = sys.modules["numpy"]

        def stats() -> str:
            flat = value.ravel()
            sample = flat[:: max(1, flat.size // SAMPLE)] if flat.size else flat
            if not sample.size or not np.issubdtype(sample.dtype, np.number):
                return "not numeric"
            of = "" if sample.size == flat.size else f" (a sample of {sample.size})"
            return f"min {sample.min()}, max {sample.max()}, mean {sample.mean()}{of}"

        return [
            ("shape", lambda: f"{value.shape}, dtype {value.dtype}, {value.nbytes} bytes"),
            ("statistics", stats),
            ("values", lambda: np.array2string(value, threshold=200, edgeitems=5)),
        ]
    if isinstance(value, (str, bytes, bytearray)):
        return [("length", lambda: str(len(value))), ("start", lambda: repr(value[:4000]))]
    if isinstance(value, dict):

        def entries() -> str:
            short = _short_repr(200)
            rows = [f"{short.repr(k)}: {short.repr(v)}" for k, v in list(value.items())[:100]]
            return "\n".join(rows)

        return [("length", lambda: str(len(value))), ("entries", entries)]
    if isinstance(value, (list, tuple, set, frozenset)):

        def items() -> str:
            short = _short_repr(200)
            return "\n".join(short.repr(x) for x in list(value)[:100])

        def kinds() -> str:
            counts = Counter(type_name(x) for x in list(value)[:100_000])
            return ", ".join(f"{k}: {n}" for k, n in sorted(counts.items()))

        return [("length", lambda: str(len(value))), ("element types", kinds), ("items", items)]

    def attributes() -> str:
        # getattr_static: reading a property must not run the user's code.
        names = [n for n in dir(value) if not n.startswith("_")][:200]
        return "\n".join(f"{n}: {type_name(inspect.getattr_static(value, n, None))}" for n in names)

    return [
        (
            "type",
            lambda: (
                f"{type_name(value)} (mro: {', '.join(c.__name__ for c in type(value).__mro__)})"
            ),
        ),
        ("repr", lambda: clip(repr(value), 4000)),
        ("doc", lambda: (inspect.getdoc(value) or "")[:1000]),
        ("public attributes", attributes),
    ]


def inspect_variable(
    name: str, namespace: Mapping[str, Any] | None = None, hidden: bool = False
) -> str:
    """A bounded text summary of one variable (at most ``INSPECT_CHARS``); a name
    ``list_variables`` hides is refused, saying by which rule, unless ``hidden``."""
    namespace = user_namespace() if namespace is None else namespace
    value = namespace.get(name, _MISSING)
    if value is _MISSING:
        known = ", ".join(n for n, _ in user_variables(namespace)[:50])
        return clip(f"No variable named {name!r}. Variables: {known or '(none)'}", INSPECT_CHARS)
    rule = None if hidden else hidden_by(name, value, startup_names())
    if rule is not None:
        return (
            f"Not shown: {name!r} is hidden, as list_variables hides {rule}. "
            "Call inspect_variable with hidden=true to read it anyway."
        )
    parts = [f"{name}: {type_name(value)}"]
    for title, section in _sections(value):
        result = bounded.call(section, SECTION_SECONDS)
        text = result if isinstance(result, str) else repr(result)
        parts.append(f"## {title}\n{clip(text, INSPECT_CHARS // 2)}")
        if sum(len(p) for p in parts) >= INSPECT_CHARS:
            break
    return clip("\n\n".join(parts), INSPECT_CHARS)
