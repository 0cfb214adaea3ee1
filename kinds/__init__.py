"""The task kinds, one folder each (kinds/<name>/), on the ground floor: each folder holds everything about its
kind, kinds/base.py what they share, kinds/kind_registry.py one line per kind. A kind imports only kinds.base, the
maths package measures/, Django and libraries, never an app; the apps look kinds up in the registry."""
