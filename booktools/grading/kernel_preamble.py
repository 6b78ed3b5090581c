# The first cell of every graded run, before any answer (cells.PREAMBLE is this file's text; it is never imported).
# It takes what the results are printed with while nothing has been patched yet (a bound method keeps its function
# when its class is patched later), and sets the watch on what the hidden tests observe through. An answer that
# names these is held (forbidden.HIDDEN_NAMES).
import json as _grader_json
import sys as _grader_sys

_GRADER_DUMPS = _grader_json.dumps
_GRADER_WRITE = _grader_sys.stdout.write
_GRADER_FLUSH = _grader_sys.stdout.flush


def _GRADER_NAMESPACES(
    _modules=_grader_sys.modules,
    _vars=vars,
    _type=type,
    _isinstance=isinstance,
    _list=list,
):
    """[(label, namespace, is a class)]: the libraries' modules and their classes, the builtins, the
    notebook's namespace and the classes it defines."""
    found, main = [], _modules["__main__"]
    for name in _GRADER_LIBRARIES:
        module = _modules.get(name)
        if module is None:
            continue
        found.append((name, _vars(module), False))
        for attr, value in _list(_vars(module).items()):
            if _isinstance(value, _type) and _vars(value) is not None:
                found.append((f"{name}.{attr}", _vars(value), True))
    for attr, value in _list(_vars(main).items()):
        if (
            _isinstance(value, _type)
            and getattr(value, "__module__", None) == "__main__"
        ):
            found.append((f"{attr}", _vars(value), True))
    found.append(("__main__", _vars(main), False))
    return found


def _GRADER_WATCH(
    answers,
    _callable=callable,
    _dict=dict,
    _list=list,
    _isinstance=isinstance,
    _hasattr=hasattr,
    _module=type(_grader_sys),
):
    """Start watching (keep what each attribute is now) whatever is not watched yet; the names the answers'
    cells bind (`answers`) are theirs to bind."""
    for label, namespace, is_class in _GRADER_NAMESPACES():
        kept = _GRADER_WATCHED.setdefault(label, (namespace, is_class, _dict()))[2]
        for attr, value in _list(namespace.items()):
            if attr in kept or f"{label}.{attr}" in _GRADER_VOLATILE:
                continue
            if label == "__main__" and (attr in answers or attr.startswith("_")):
                continue
            # code, not data: a function, a class, a method or property (a descriptor), a module; a counter
            # such as RemovableHandle.next_id changes as the notebook runs
            if (
                _callable(value)
                or _hasattr(value, "__get__")
                or _isinstance(value, _module)
            ):
                kept[attr] = value


def _GRADER_CHANGED(_sorted=sorted, _callable=callable, _list=list, _hasattr=hasattr):
    """What an answer changed in what it should leave alone: an attribute of a library, of a class, or of
    the notebook that now holds another object or none, and a function a class gained."""
    changed = []
    for label, (namespace, is_class, kept) in _list(_GRADER_WATCHED.items()):
        for attr, value in _list(kept.items()):
            if namespace.get(attr, _GRADER_MISSING) is not value:
                changed.append(f"{label}.{attr}")
        if is_class:
            changed += [
                f"{label}.{attr}"
                for attr, value in _list(namespace.items())
                if attr not in kept and (_callable(value) or _hasattr(value, "__get__"))
            ]
    return _sorted(changed)[:20]


_GRADER_LIBRARIES = (
    "builtins",
    "math",
    "copy",
    "functools",
    "itertools",
    "random",
    "collections",
    "numpy",
    "torch",
    "torch.nn",
    "torch.nn.functional",
    "torch.nn.init",
    "torch.nn.modules.module",
    "torch.linalg",
    "torch.func",
    "torch.autograd",
    "torch.optim",
    "torch.nn.utils",
    "torch.utils.checkpoint",
)
# what the kernel itself sets for each cell it runs
_GRADER_VOLATILE = {"builtins.input", "builtins._", "builtins.__", "builtins.___"}
_GRADER_WATCHED = {}
_GRADER_MISSING = object()
