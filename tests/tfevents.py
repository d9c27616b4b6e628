#!/usr/bin/python3
"""An independent reader of TensorBoard event files, for the tests.

Nothing from tensorgrid: the record framing is parsed with `struct`, both
masked CRC-32Cs are checked with a CRC-32C written here, and the Event
protos are decoded from the protobuf wire format by hand, with TensorFlow's
field numbers (tensorflow/core/util/event.proto, framework/summary.proto):

  Event:         wall_time 1 (double), step 2 (int64), file_version 3 (string),
                 graph_def 4 (bytes), summary 5 (Summary)
  Summary:       value 1 (repeated Value)
  Summary.Value: tag 1 (string), simple_value 2 (float)
  GraphDef:      node 1 (repeated NodeDef); NodeDef: name 1 (string)

A field this reader does not know is an error: the tests know what was
written.

usage: tfevents.py DIR_OR_FILE...   prints "step tag value" per scalar
"""
import glob
import os
import struct
import sys

_CRC_TABLE = []
for _i in range(256):
    _c = _i
    for _ in range(8):
        _c = (_c >> 1) ^ (0x82F63B78 if _c & 1 else 0)
    _CRC_TABLE.append(_c)


def crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc = _CRC_TABLE[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked_crc(data):
    crc = crc32c(data)
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


class FormatError(Exception):
    pass


def read_records(path):
    """The records of a TFRecord file; FormatError naming the first bad one."""
    with open(path, "rb") as f:
        data = f.read()
    records, offset = [], 0
    while offset < len(data):
        where = "%s: record %d at byte %d" % (path, len(records), offset)
        if len(data) - offset < 12:
            raise FormatError(where + ": truncated header")
        header = data[offset:offset + 8]
        (length,) = struct.unpack("<Q", header)
        (length_crc,) = struct.unpack("<I", data[offset + 8:offset + 12])
        if length_crc != masked_crc(header):
            raise FormatError(where + ": length CRC mismatch")
        end = offset + 12 + length
        if end + 4 > len(data):
            raise FormatError(where + ": truncated data")
        body = data[offset + 12:end]
        (data_crc,) = struct.unpack("<I", data[end:end + 4])
        if data_crc != masked_crc(body):
            raise FormatError(where + ": data CRC mismatch")
        records.append(body)
        offset = end + 4
    return records


def _varint(buf, pos):
    value, shift = 0, 0
    while True:
        if pos >= len(buf):
            raise FormatError("truncated varint")
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, pos


def fields(buf):
    """(field number, wire type, value) for each field of a message."""
    pos = 0
    while pos < len(buf):
        key, pos = _varint(buf, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(buf, pos)
        elif wire == 1:
            value, pos = buf[pos:pos + 8], pos + 8
        elif wire == 2:
            length, pos = _varint(buf, pos)
            value, pos = buf[pos:pos + length], pos + length
        elif wire == 5:
            value, pos = buf[pos:pos + 4], pos + 4
        else:
            raise FormatError("wire type %d of field %d" % (wire, number))
        if pos > len(buf):
            raise FormatError("field %d runs past the message" % number)
        yield number, wire, value


def _expect(number, wire, want_wire, message):
    if wire != want_wire:
        raise FormatError("%s field %d: wire type %d, not %d" % (message, number, wire, want_wire))


def decode_summary(buf):
    """[(tag, simple_value)] of a Summary."""
    values = []
    for number, wire, value in fields(buf):
        if number != 1:
            raise FormatError("Summary: unexpected field %d" % number)
        _expect(number, wire, 2, "Summary")
        tag, simple = None, None
        for n, w, v in fields(value):
            if n == 1:
                _expect(n, w, 2, "Summary.Value")
                tag = v.decode("utf-8")
            elif n == 2:
                _expect(n, w, 5, "Summary.Value")
                (simple,) = struct.unpack("<f", v)
            else:
                raise FormatError("Summary.Value: unexpected field %d" % n)
        values.append((tag, simple))
    return values


def decode_event(buf):
    """A dict: wall_time, step, and one of file_version, graph_def, summary."""
    event = {"wall_time": 0.0, "step": 0}
    for number, wire, value in fields(buf):
        if number == 1:
            _expect(number, wire, 1, "Event")
            (event["wall_time"],) = struct.unpack("<d", value)
        elif number == 2:
            _expect(number, wire, 0, "Event")
            event["step"] = value - (1 << 64) if value >= 1 << 63 else value
        elif number == 3:
            _expect(number, wire, 2, "Event")
            event["file_version"] = value.decode("utf-8")
        elif number == 4:
            _expect(number, wire, 2, "Event")
            event["graph_def"] = value
        elif number == 5:
            _expect(number, wire, 2, "Event")
            event["summary"] = decode_summary(value)
        else:
            raise FormatError("Event: unexpected field %d" % number)
    return event


def graph_node_names(buf):
    """The node names of a serialized GraphDef (other fields skipped)."""
    names = []
    for number, wire, value in fields(buf):
        if number == 1 and wire == 2:
            for n, w, v in fields(value):
                if n == 1 and w == 2:
                    names.append(v.decode("utf-8"))
    return names


def read_events(path):
    return [decode_event(r) for r in read_records(path)]


def event_files(logdir):
    return sorted(glob.glob(os.path.join(logdir, "events.out.tfevents.*")))


def main(argv):
    paths = []
    for arg in argv[1:]:
        paths += event_files(arg) if os.path.isdir(arg) else [arg]
    if not paths:
        print("tfevents.py: no event files in %s" % " ".join(argv[1:]), file=sys.stderr)
        return 1
    for path in paths:
        for event in read_events(path):
            for tag, value in event.get("summary", []):
                print("%d %s %r" % (event["step"], tag, value))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
