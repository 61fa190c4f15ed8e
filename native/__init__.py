"""Python side of the native (C++) rungs: loading the built modules, a shared Generator."""
