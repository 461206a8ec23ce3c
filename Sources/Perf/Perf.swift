// The facade users import: every public name of Perf lives inside `enum Perf`.

/// Performance instrumentation for Swift programs on Linux.
public enum Perf {}
