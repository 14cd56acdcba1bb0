"""Reads Puffin files of deletion vectors the way Iceberg's spec describes them, with pyroaring (CRoaring) as
the Roaring decoder, for test/iceberg/deletion-vectors.test.ts: reads {"files": [<base64 Puffin file>]} on
stdin, prints {"files": [{"footer": <footer JSON>, "blobs": [{"properties", "positions"}]}]}.

Checks what a reader must: the magic at both ends, the footer size and flags (little endian), and per
deletion-vector-v1 blob its big-endian length, magic D1 D3 39 64 and CRC-32 (big endian) of magic + vector.
"""
import base64
import json
import struct
import sys
import zlib

from pyroaring import BitMap64

MAGIC = b'PFA1'
DV_MAGIC = bytes([0xD1, 0xD3, 0x39, 0x64])


def read_puffin(data):
    assert data[:4] == MAGIC, 'no Puffin magic at the start'
    assert data[-4:] == MAGIC, 'no Puffin magic at the end'
    size, flags = struct.unpack('<ii', data[-12:-4])
    assert flags == 0, 'footer flags %d (compressed?)' % flags
    footer_start = len(data) - 12 - size
    assert data[footer_start - 4:footer_start] == MAGIC, 'no magic before the footer payload'
    footer = json.loads(data[footer_start:footer_start + size].decode('utf-8'))
    blobs = []
    for b in footer['blobs']:
        raw = data[b['offset']:b['offset'] + b['length']]
        assert b['type'] == 'deletion-vector-v1', b['type']
        (length,) = struct.unpack('>I', raw[:4])
        assert length == len(raw) - 8, 'length %d, blob %d' % (length, len(raw))
        vector = raw[4:4 + length]
        assert vector[:4] == DV_MAGIC, 'no deletion vector magic'
        (crc,) = struct.unpack('>I', raw[4 + length:])
        assert crc == zlib.crc32(vector) & 0xFFFFFFFF, 'CRC mismatch'
        positions = list(BitMap64.deserialize(vector[4:]))
        blobs.append({'properties': b.get('properties', {}), 'positions': positions})
    return {'footer': footer, 'blobs': blobs}


def main():
    cmd = json.load(sys.stdin)
    json.dump({'files': [read_puffin(base64.b64decode(f)) for f in cmd['files']]}, sys.stdout)
    sys.stdout.write('\n')


if __name__ == '__main__':
    main()
