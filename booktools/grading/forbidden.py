"""What an answer may not touch: the modules, names and attributes the scan (scan.py) holds an answer for."""

import builtins
import re

# Modules and names that let a few lines rewrite the grader's world; importing or using one is flagged.
FORBIDDEN_MODULES = {
    "builtins",
    "sys",
    "os",
    "IPython",
    "json",
    "importlib",
    "ctypes",
    "subprocess",
    "inspect",
    "gc",
    "__main__",  # the notebook's namespace, where the helpers the tests could call live
    "types",
    "ipykernel",
    "traitlets",
    "atexit",
    "runpy",
    "marshal",
    "traceback",
    # what fetches or runs code by a string, or reroutes what the kernel prints
    "pickle",
    "pkgutil",
    "code",
    "codeop",
    "contextlib",
    "io",
}


# What an answer may import: the numerical libraries and the plain standard modules an exercise needs. Anything
# else is held for a person to read: the standard library has many more ways to run code from a string or to reach
# the interpreter (timeit, operator.attrgetter, pdb, threading, ...) than a list of forbidden ones would keep up with.
ALLOWED_IMPORTS = {
    "math",
    "cmath",
    "numpy",
    "torch",
    "fractions",
    "decimal",
    "numbers",
    "itertools",
    "functools",
    "collections",
    "statistics",
    "random",
    "copy",
    "heapq",
    "bisect",
    "time",
    "re",
    "typing",  # annotations; its one way to evaluate a string (get_type_hints) is a GATEWAY
    "matplotlib",
    "sklearn",
    "scipy",
}


# Attributes through which a library hands over the interpreter's own modules (`torch.sys`, `np.os`), the
# environment, or code built from a string.
GATEWAYS = FORBIDDEN_MODULES | {
    "environ",
    "cpp_extension",
    "load_inline",
    "load_library",
    "package",
    "hub",
    "ctypeslib",
    "f2py",
    "fx",
    "multiprocessing",
    "rcParams",
    "use",  # matplotlib.use('module://...') imports a module by name
    "get_type_hints",  # typing evaluates the strings in annotations
    "ForwardRef",
}


FORBIDDEN_NAMES = {
    "__import__",
    "get_ipython",
    "exec",
    "eval",
    "compile",
    "globals",
    "locals",
    "__builtins__",
}


# The hidden tests' private helpers (booktools/grading/hidden/_common.py): an answer has no business with them, and
# _SECRET would tell it the inputs it is graded on.
HIDDEN_NAMES = {
    "_SECRET",
    "_SEEDS",
    "_DRAWN",
    "_OBSERVED",
    "_KEPT",
    "_seed",
    "_plain",
    "_observe",
    "_raw",
    "_keep",
    "_kept_array",
    "_kept_state",
    "_mark",
    "_modules_of",
    "_tensors_of",
    "_shows_mark",
    "_refers_to",
    "_code_objects",
    "_holds",
    "_is_a",
    # what the grader prints results with (kernel_preamble.py)
    "_grader_json",
    "_grader_sys",
    "_GRADER_DUMPS",
    "_GRADER_WRITE",
    "_GRADER_FLUSH",
    "_GRADER_NAMESPACES",
    "_GRADER_WATCH",
    "_GRADER_CHANGED",
    "_GRADER_LIBRARIES",
    "_GRADER_WATCHED",
    "_GRADER_MISSING",
    "_GRADER_VOLATILE",
}


REFLECTION = {"getattr", "setattr", "delattr", "vars"}


DUNDERS = {
    "__dict__",
    "__globals__",
    "__builtins__",
    "__code__",
    "__class__",
    "__subclasses__",
    "__closure__",
    "__self__",  # `print.__self__` is the builtins module
    "__traceback__",
    "__mro__",
    "mro",  # `Block.mro()[1]` is nn.Module
    "__bases__",
    "__base__",
    # `object.__setattr__(module, ...)`, pickling hooks
    "__setattr__",
    "__delattr__",
    "__getattribute__",
    "__reduce__",
    "__reduce_ex__",
    "__loader__",
    "__spec__",
}


# Ways into the stack's frames, where a hidden test's own variables live while the answer runs.
FRAMES = {
    "tb_frame",
    "tb_next",
    "f_back",
    "f_locals",
    "f_globals",
    "f_builtins",
    "gi_frame",
    "cr_frame",
    "ag_frame",
    "currentframe",
    "_getframe",
    "walk_stack",
    "walk_tb",
    "extract_stack",
}


# Names an answer's top level must not rebind: the grader's own code looks them up in the same namespace.
BUILTINS = set(dir(builtins)) - {
    "_",
    "__doc__",
    "__name__",
    "__spec__",
    "__loader__",
    "__package__",
}


# Methods through which a returned object decides how it compares, converts or answers an attribute lookup: an
# object that equals anything passes any `==` test. An answer has no need to define them.
LYING_METHODS = {
    "__eq__",
    "__ne__",
    "__lt__",
    "__le__",
    "__gt__",
    "__ge__",
    "__bool__",
    "__float__",
    "__int__",
    "__index__",
    "__hash__",
    "__getattr__",
    "__getattribute__",
    "__instancecheck__",
    "__torch_function__",
    "__torch_dispatch__",
}


# Library attributes that change what every later call computes (global module hooks, operator overrides).
GLOBAL_HOOKS = re.compile(r"^(register_module_\w+|library|overrides|_C)$")
