// PLACEHOLDER: replaced by the JournalKit work.
/// A crash-durable, append-only journal (placeholder).
public final class Journal {}
