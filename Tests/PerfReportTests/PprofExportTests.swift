// The pprof export read back by a decoder written here: the gzip member's stored blocks and CRC,
// then the profile's fields, string table, functions, locations and samples.
import Foundation
import PerfCore
import PerfTestSupport
import Testing

@testable import PerfReport

/// One protobuf message's fields, in order: enough of the wire format to check what the exporter
/// wrote (varints and length-delimited fields only, as it writes nothing else).
struct ProtoFields {
    enum Value: Equatable {
        case varint(UInt64)
        case bytes([UInt8])
    }

    var fields: [(number: Int, value: Value)] = []

    init(_ bytes: [UInt8]) throws {
        var position = 0
        func varint() throws -> UInt64 {
            var result: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                let byte = try #require(position < bytes.count ? bytes[position] : nil, "a varint runs off the end")
                position += 1
                result |= UInt64(byte & 0x7F) << shift
                if byte & 0x80 == 0 { return result }
                shift += 7
                try #require(shift < 64, "a varint longer than 10 bytes")
            }
        }
        while position < bytes.count {
            let key = try varint()
            switch key & 7 {
            case 0: fields.append((Int(key >> 3), .varint(try varint())))
            case 2:
                let length = Int(try varint())
                try #require(position + length <= bytes.count, "a field runs off the end")
                fields.append((Int(key >> 3), .bytes(Array(bytes[position..<position + length]))))
                position += length
            default: Issue.record("wire type \(key & 7) is not one the exporter writes")
            }
        }
    }

    func varints(_ number: Int) -> [UInt64] {
        fields.compactMap { $0.number == number ? (Self.varint($0.value)) : nil }
    }

    func messages(_ number: Int) throws -> [ProtoFields] {
        try fields.compactMap { field -> ProtoFields? in
            guard field.number == number, case .bytes(let bytes) = field.value else { return nil }
            return try ProtoFields(bytes)
        }
    }

    func strings(_ number: Int) -> [String] {
        fields.compactMap { field in
            guard field.number == number, case .bytes(let bytes) = field.value else { return nil }
            return String(decoding: bytes, as: UTF8.self)
        }
    }

    /// A packed repeated varint field, unpacked.
    func packed(_ number: Int) -> [UInt64] {
        var values: [UInt64] = []
        for field in fields where field.number == number {
            guard case .bytes(let bytes) = field.value else { continue }
            var value: UInt64 = 0
            var shift: UInt64 = 0
            for byte in bytes {
                value |= UInt64(byte & 0x7F) << shift
                shift += 7
                if byte & 0x80 == 0 {
                    values.append(value)
                    value = 0
                    shift = 0
                }
            }
        }
        return values
    }

    static func varint(_ value: Value) -> UInt64? {
        if case .varint(let number) = value { return number }
        return nil
    }
}

/// The bytes of a gzip member of stored blocks, after checking its header, blocks, CRC and size.
func gunzipStored(_ file: [UInt8]) throws -> [UInt8] {
    try #require(file.count >= 18 && file.prefix(4) == [0x1F, 0x8B, 0x08, 0x00])
    var position = 10
    var data: [UInt8] = []
    var final = false
    while !final {
        let header = file[position]
        final = header & 1 == 1
        try #require(header >> 1 & 3 == 0, "a stored block")
        let length = Int(file[position + 1]) | Int(file[position + 2]) << 8
        let complement = Int(file[position + 3]) | Int(file[position + 4]) << 8
        try #require(length ^ complement == 0xFFFF)
        data += file[position + 5..<position + 5 + length]
        position += 5 + length
    }
    func word(_ at: Int) -> UInt32 { (0..<4).reduce(0) { $0 | UInt32(file[at + $1]) << (8 * $1) } }
    #expect(word(position) == CRC32.checksum(data))
    #expect(word(position + 4) == UInt32(data.count))
    #expect(position + 8 == file.count)
    return data
}

@Suite struct PprofExportTests {
    @Test func crc32IsIEEEsNotCastagnolis() {
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
        #expect(CRC32.checksum([]) == 0)
    }

    @Test(arguments: [0, 1, 65_535, 65_536, 200_000])
    func gzipSplitsIntoStoredBlocksAndRoundTrips(count: Int) throws {
        var random = SeededRandom(seed: SeededRandom.makeSeed())
        let data = (0..<count).map { _ in UInt8.random(in: 0...255, using: &random) }
        let file = Gzip.wrap(data)
        #expect(try gunzipStored(file) == data)
        let blocks = max(1, (count + Gzip.maximumBlockBytes - 1) / Gzip.maximumBlockBytes)
        #expect(file.count == 10 + blocks * 5 + count + 8)
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/gzip"), "needs /usr/bin/gzip"))
    func gzipReadsBackThroughTheSystemsGzip() throws {
        let directory = try TemporaryDirectory("pprof-gzip")
        defer { directory.remove() }
        let data = Array(repeating: Array("span profile ".utf8), count: 10_000).flatMap { $0 }
        let file = directory.file("data.gz")
        try Data(Gzip.wrap(data)).write(to: file)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/gzip")
        process.arguments = ["-dc", file.path]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let out = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect([UInt8](out) == data)
    }

    @Test func theProfileNamesItsFramesSamplesAndSpans() throws {
        let input = try SpanProfileFixture.exportInput()
        #expect(input.hasProfiles)
        let profile = try ProtoFields(try gunzipStored(PprofExport.render(input)))
        let strings = profile.strings(6)
        #expect(strings.first == "")
        #expect(Set(strings).count == strings.count, "each string once")
        func string(_ index: UInt64?) -> String? { index.flatMap { Int(exactly: $0) }.map { strings[$0] } }
        // Sample types: samples/count, wall/nanoseconds; the default is samples.
        let types = try profile.messages(1).map { [string($0.varints(1).first), string($0.varints(2).first)] }
        #expect(types == [["samples", "count"], ["wall", "nanoseconds"]])
        #expect(string(profile.varints(14).first) == "samples")
        #expect(profile.varints(12) == [10_000_000], "the period: 10 ms")
        // One function and one location per distinct frame, the location pointing at its function.
        let functions = try profile.messages(5)
        var names: [UInt64: String] = [:]
        for function in functions {
            names[try #require(function.varints(1).first)] = string(function.varints(2).first)
        }
        #expect(
            Set(names.values) == [
                "__read", "App.Store.load(id:)", "App.handle(_:)", "swift_job_run", "App.parse(_:)", "other",
            ])
        var frameOfLocation: [UInt64: String] = [:]
        for location in try profile.messages(4) {
            let line = try #require(try location.messages(4).first)
            frameOfLocation[try #require(location.varints(1).first)] = names[try #require(line.varints(1).first)]
        }
        #expect(frameOfLocation.count == names.count)
        // Samples: one per top entry, in line order; values count and count × 10 ms.
        let samples = try profile.messages(2).map { sample in
            let frames = sample.packed(1).map { frameOfLocation[$0] ?? "?" }
            let labels = try sample.messages(3).map {
                "\(string($0.varints(1).first) ?? "?")=\(string($0.varints(2).first) ?? "?")"
            }
            return (frames: frames, values: sample.packed(2), labels: labels)
        }
        #expect(
            samples.map(\.values) == [
                [37, 370_000_000], [10, 100_000_000], [3, 30_000_000], [12, 120_000_000], [8, 80_000_000],
            ])
        #expect(samples[0].frames == SpanProfileFixture.readStack, "innermost first, as pprof reads location ids")
        #expect(samples[2].frames == ["other"])
        #expect(
            samples[0].labels == [
                "span=api.get", "span_id=s-profile/scope 7", "wait=read(fd 7 → socket 127.0.0.1:5432)",
            ])
        #expect(samples[3].labels == ["span=api.get", "span_id=s-profile/scope 9"])
    }

    @Test func aReportWithoutProfilesGivesAnEmptyProfile() throws {
        let input = ExportInput(report: PerformanceReport(), path: "empty.json")
        #expect(!input.hasProfiles)
        let profile = try ProtoFields(try gunzipStored(PprofExport.render(input)))
        #expect(try profile.messages(2).isEmpty)
        #expect(profile.strings(6).first == "")
    }
}
