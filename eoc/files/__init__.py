"""Reading files and streams eoc did not write, safely: bounded reads and strict JSON
(:mod:`eoc.files.bounded`), and the checks a file in a shared folder must pass before it is
trusted (:mod:`eoc.files.trust`). The lowest floor of the core: it imports nothing of eoc but
its errors."""
