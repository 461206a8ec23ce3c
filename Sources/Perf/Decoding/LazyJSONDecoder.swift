// A JSON `Decoder` that parses only what a type's `init(from:)` reads. Diagnostic payloads are
// mostly histograms: a report build reads hundreds of payloads, most of them only for their
// process figures. JSONDecoder tokenises every byte of each and allocates a container per bucket
// pair; this one validates the bytes in one pass, remembers where each object and array ends,
// and skips what is never asked for. The types decoded are the same: `DiagnosticSnapshot`,
// `SpanIntervals`, the histograms, through their own `init(from:)`.

/// Decodes a `Decodable` from UTF-8 JSON bytes, lazily.
///
/// The whole input is validated first by ``JSONScanner`` (RFC 8259 strictly: numbers, strings,
/// UTF-8, escapes, no trailing comma; nesting at most 128 deep), so JSON that is malformed
/// anywhere is rejected, even in a member no type reads. A surrogate escape without its pair is
/// an error when the string is read. Errors are `DecodingError`s with the coding paths JSONDecoder
/// gives.
struct LazyJSONDecoder {
    var userInfo: [CodingUserInfoKey: Any] = [:]

    func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
        let document = try LazyJSONDocument(bytes)
        return try T(
            from: LazyJSONValueDecoder(document: document, start: document.root, codingPath: [], userInfo: userInfo))
    }
}

/// The validated bytes and where each object and array ends.
