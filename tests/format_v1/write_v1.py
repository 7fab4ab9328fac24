"""How the format-1 files beside this script were written: by parity at commit 09503ee (format 1.1), the last
writer of format 1. Kept as they were written, for tests/codec_test.cc (Format1), which reads them with today's
reader; today's writer writes format 2 and cannot make them again. Run with that commit's parity._core:

    PYTHONPATH=build/python:python:tests python tests/format_v1/write_v1.py tests/format_v1
"""
import os
import sys

import codec_cases
import parity

# Each case of codec_cases but two: the memmap's state names a temporary file, and the large strided array
# is 12 MB; the layouts both exercise are covered by the others.
SKIPPED = {'memmap', 'strided_larger_than_staging'}


def main(out):
    for name, make in codec_cases.CASES.items():
        if name not in SKIPPED:
            parity.write_result(os.path.join(out, name + '.parity'), make())
    parity.write_result(os.path.join(out, 'damaged_base.parity'), codec_cases.DAMAGED_BASE())
    parity.write_result(os.path.join(out, 'allow_list_base.parity'), codec_cases.ALLOW_LIST_BASE())


if __name__ == '__main__':
    main(sys.argv[1])
