#!/usr/bin/env python3
"""Checks gprof-report's Perfetto protobuf timeline against its Chrome JSON timeline of the same run.

1. protoc decodes the protobuf with the schema subset (report/timeline/perfetto_trace_subset.proto, field numbers
   as Perfetto's): framing, lengths, wire types; a field number the schema does not know fails the check.
2. The rules trace_processor (and so Perfetto UI) relies on: non-zero sequence ids; every sequence starts by
   clearing incremental state; packets that use interned data or defaults say so (flag 2); every iid is defined on
   its sequence before (or in) the packet using it; every track is described once, before its events, with a
   described parent; one uuid per thread; counters only on counter tracks; BEGIN/END balance per track in time
   order; each flow id opened once (flow_ids) and closed once (terminating_flow_ids), in time order; a clock
   snapshot makes BOOTTIME the trace clock, and each sequence's incremental clock is snapshotted before use.
3. Every slice of the JSON (name, start ns, duration ns) is in the protobuf and nothing else is; the same for
   instants, counter samples and flows.
Exit status 0 when all hold; otherwise the failures, one a line.

usage: check_perfetto.py --report GPROF_REPORT --proto SUBSET.proto [--max-ratio R] INPUT...
       check_perfetto.py --proto SUBSET.proto --schema-only FILE.pftrace
The second form does step 1 only, for files too big to hold decoded: protoc decodes the packets in slices of
about 32 MB (a run of whole packets is itself a valid Trace).
"""
import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile
import threading

SEQ_INCREMENTAL_STATE_CLEARED, SEQ_NEEDS_INCREMENTAL_STATE = 1, 2
BOOTTIME, REALTIME = 6, 1


def parse_text_format(text):
    """protoc's text output -> nested dicts of lists (every field is a list)."""
    root = {}
    stack = [root]
    line_re = re.compile(r'^\s*([A-Za-z0-9_]+)(?::\s*(.*))?\s*(\{)?\s*$')
    for line in text.splitlines():
        s = line.strip()
        if not s:
            continue
        if s == '}':
            stack.pop()
            continue
        m = line_re.match(line)
        if not m:
            raise ValueError('cannot parse: ' + line)
        key, value, brace = m.group(1), m.group(2), m.group(3)
        if brace or (value is None):
            child = {}
            stack[-1].setdefault(key, []).append(child)
            stack.append(child)
            continue
        if value.endswith('{'):
            raise ValueError('cannot parse: ' + line)
        stack[-1].setdefault(key, []).append(decode_value(value))
    return root


def decode_value(v):
    if v.startswith('"'):
        raw = v[1:-1]
        return raw.encode('latin-1', 'backslashreplace').decode('unicode_escape').encode('latin-1').decode(
            'utf-8', 'replace')
    if re.fullmatch(r'-?[0-9]+', v):
        return int(v)
    if re.fullmatch(r'-?[0-9.eE+\-]+|-?inf|nan', v):
        return float(v)
    return v  # enum name or true/false


def one(msg, key, default=None):
    v = msg.get(key)
    return v[0] if v else default


class Checker:
    def __init__(self):
        self.errors = []
        self.tracks = {}         # uuid -> descriptor
        self.thread_uuid = {}    # (pid, tid) -> uuid
        self.seq = {}            # seq id -> state
        self.slices = []         # (name, start_boot, dur)
        self.instants = []       # (name, ts_boot)
        self.counters = []       # (track name, ts_boot, value)
        self.flow_open = {}      # id -> ts
        self.flow_closed = {}
        self.open_slices = collections.defaultdict(list)  # uuid -> stack of (name, ts)
        self.boot_ref = self.real_ref = None
        self.trace_clock_boottime = False
        self.seen_event = False

    def error(self, text):
        if len(self.errors) < 50:
            self.errors.append(text)

    def packet(self, i, p):
        seq_id = one(p, 'trusted_packet_sequence_id', 0)
        if not seq_id:
            return self.error(f'packet {i}: no trusted_packet_sequence_id')
        flags = one(p, 'sequence_flags', 0)
        st = self.seq.get(seq_id)
        if st is None:
            if not flags & SEQ_INCREMENTAL_STATE_CLEARED:
                self.error(f'packet {i}: first packet of sequence {seq_id} does not clear incremental state')
            st = self.seq[seq_id] = {}
        if flags & SEQ_INCREMENTAL_STATE_CLEARED:
            st.clear()
            st.update(names={}, cats={}, keys={}, values={}, defaults={}, clock64=None)
        for d in p.get('trace_packet_defaults', []):
            st['defaults'] = d
        for idata in p.get('interned_data', []):
            for field, table, text in (('event_names', 'names', 'name'), ('event_categories', 'cats', 'name'),
                                       ('debug_annotation_names', 'keys', 'name'),
                                       ('debug_annotation_string_values', 'values', 'str')):
                for e in idata.get(field, []):
                    st[table].setdefault(one(e, 'iid'), one(e, text))  # the first definition wins
        if 'clock_snapshot' in p:
            return self.clock_snapshot(i, seq_id, st, one(p, 'clock_snapshot'))
        if 'track_descriptor' in p:
            if self.seen_event:
                self.error(f'packet {i}: track descriptor after events')
            return self.descriptor(i, one(p, 'track_descriptor'))
        if 'track_event' in p:
            self.seen_event = True
            return self.event(i, p, seq_id, st, flags, one(p, 'track_event'))

    def clock_snapshot(self, i, seq_id, st, cs):
        clocks = {one(c, 'clock_id'): (one(c, 'timestamp'), one(c, 'is_incremental', 'false') == 'true')
                  for c in cs.get('clocks', [])}
        if 64 in clocks:
            if BOOTTIME not in clocks or not clocks[64][1]:
                self.error(f'packet {i}: clock 64 must be incremental and tied to BOOTTIME')
            st['clock64'] = clocks[64][0]
        elif BOOTTIME in clocks and REALTIME in clocks:
            self.boot_ref, self.real_ref = clocks[BOOTTIME][0], clocks[REALTIME][0]
            self.trace_clock_boottime = one(cs, 'primary_trace_clock') == 'BUILTIN_CLOCK_BOOTTIME'
        else:
            self.error(f'packet {i}: unexpected clock snapshot {clocks}')

    def descriptor(self, i, d):
        uuid = one(d, 'uuid', 0)
        if not uuid:
            return self.error(f'packet {i}: track descriptor without uuid')
        if uuid in self.tracks:
            return self.error(f'packet {i}: track {uuid} described twice')
        parent = one(d, 'parent_uuid')
        if parent is not None and parent not in self.tracks:
            self.error(f'packet {i}: track {uuid} has an undescribed parent {parent}')
        if 'thread' in d:
            t = one(d, 'thread')
            key = (one(t, 'pid'), one(t, 'tid'))
            if None in key:
                self.error(f'packet {i}: thread descriptor without pid/tid')
            if key in self.thread_uuid:
                self.error(f'packet {i}: thread {key} has two uuids')
            self.thread_uuid[key] = uuid
        if 'process' in d and one(one(d, 'process'), 'pid') is None:
            self.error(f'packet {i}: process descriptor without pid')
        self.tracks[uuid] = d

    def event(self, i, p, seq_id, st, flags, e):
        if not flags & SEQ_NEEDS_INCREMENTAL_STATE:
            self.error(f'packet {i}: event packet without SEQ_NEEDS_INCREMENTAL_STATE')
        defaults = st.get('defaults', {})
        uuid = one(e, 'track_uuid', one(one(defaults, 'track_event_defaults', {}), 'track_uuid'))
        if uuid not in self.tracks:
            return self.error(f'packet {i}: event on undescribed track {uuid}')
        if 'timestamp' not in p:
            return self.error(f'packet {i}: event without timestamp')
        clock = one(p, 'timestamp_clock_id', one(defaults, 'timestamp_clock_id'))
        if clock == 64:
            if st.get('clock64') is None:
                return self.error(f'packet {i}: clock 64 used before its snapshot on sequence {seq_id}')
            st['clock64'] += one(p, 'timestamp')
            ts = st['clock64']
        elif clock is None:
            ts = one(p, 'timestamp')
        else:
            return self.error(f'packet {i}: unexpected clock {clock}')

        def name_of():
            iid = one(e, 'name_iid')
            if iid is None:
                return one(e, 'name')
            if iid not in st['names']:
                self.error(f'packet {i}: event name iid {iid} not interned on sequence {seq_id}')
            return st['names'].get(iid)

        for c in e.get('category_iids', []):
            if c not in st['cats']:
                self.error(f'packet {i}: category iid {c} not interned')
        for a in e.get('debug_annotations', []):
            self.annotation(i, st, a, top=True)
        typ = one(e, 'type')
        track = self.tracks[uuid]
        if typ == 'TYPE_COUNTER':
            if 'counter' not in track:
                self.error(f'packet {i}: counter value on a non-counter track {uuid}')
            value = one(e, 'counter_value')
            if value is None and 'double_counter_value' in e:
                value = round(one(e, 'double_counter_value'), 3)  # the JSON writes reals with three decimals
            if value is None:
                self.error(f'packet {i}: a counter event without a value')
            self.counters.append((one(track, 'name'), ts, value))
            return
        if 'counter' in track:
            return self.error(f'packet {i}: {typ} on counter track {uuid}')
        if typ == 'TYPE_SLICE_BEGIN':
            self.open_slices[uuid].append((name_of(), ts))
        elif typ == 'TYPE_SLICE_END':
            if not self.open_slices[uuid]:
                return self.error(f'packet {i}: SLICE_END without an open slice on track {uuid}')
            name, start = self.open_slices[uuid].pop()
            if ts < start:
                self.error(f'packet {i}: slice {name!r} ends before it begins')
            self.slices.append((name, start, ts - start))
        elif typ == 'TYPE_INSTANT':
            self.instants.append((name_of(), ts))
        else:
            self.error(f'packet {i}: unexpected event type {typ}')
        for fid in e.get('flow_ids', []):
            if fid in self.flow_open:
                self.error(f'flow {fid} opened twice')
            self.flow_open[fid] = ts
        for fid in e.get('terminating_flow_ids', []):
            if fid in self.flow_closed:
                self.error(f'flow {fid} closed twice')
            self.flow_closed[fid] = ts

    def annotation(self, i, st, a, top):
        iid = one(a, 'name_iid')
        if iid is not None and iid not in st['keys']:
            self.error(f'packet {i}: annotation name iid {iid} not interned')
        if top and iid is None and one(a, 'name') is None:
            self.error(f'packet {i}: annotation without a name')
        v = one(a, 'string_value_iid')
        if v is not None and v not in st['values']:
            self.error(f'packet {i}: string value iid {v} not interned')
        for child in a.get('dict_entries', []):
            self.annotation(i, st, child, top=True)
        for child in a.get('array_values', []):
            self.annotation(i, st, child, top=False)

    def finish(self):
        for uuid, stack in self.open_slices.items():
            if stack:
                self.error(f'track {uuid}: {len(stack)} slices never ended')
        for fid, ts in self.flow_open.items():
            if fid not in self.flow_closed:
                self.error(f'flow {fid} never closed')
            elif self.flow_closed[fid] < ts:
                self.error(f'flow {fid} closed before it opened')
        for fid in self.flow_closed:
            if fid not in self.flow_open:
                self.error(f'flow {fid} closed but never opened')
        if self.boot_ref is None or not self.trace_clock_boottime:
            self.error('no BOOTTIME/REALTIME clock snapshot making BOOTTIME the trace clock')


def json_events(doc):
    base = doc['baseTimeNanoseconds']
    ns = lambda v: base + round(v * 1000)
    slices, instants, counters, flows = [], [], [], 0
    for e in doc['traceEvents']:
        ph = e['ph']
        if ph == 'X':
            slices.append((e['name'], ns(e['ts']), round(e['dur'] * 1000)))
        elif ph == 'i':
            instants.append((e['name'], ns(e['ts'])))
        elif ph == 'C':
            counters.append((ns(e['ts']), list(e['args'].values())[0]))
        elif ph == 'f':
            flows += 1
    return slices, instants, counters, flows


def varint(b, i):
    r = s = 0
    while True:
        c = b[i]
        i += 1
        r |= (c & 0x7f) << s
        s += 7
        if c < 0x80:
            return r, i


def schema_only(proto, path):
    proto_dir, proto_file = os.path.split(os.path.abspath(proto))
    data = open(path, 'rb').read()
    i = start = packets = unknown = 0
    while start < len(data):
        while i < len(data) and i - start < (32 << 20):
            if data[i] != 0x0A:
                print(f'FAIL: byte {i}: not a Trace.packet field')
                return 1
            n, j = varint(data, i + 1)
            if j + n > len(data):
                print(f'FAIL: byte {i}: the last packet is cut')
                return 1
            i = j + n
            packets += 1
        p = subprocess.Popen(['protoc', '--decode=perfetto.protos.Trace', '-I', proto_dir, proto_file],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        feeder = threading.Thread(target=lambda: (p.stdin.write(data[start:i]), p.stdin.close()))
        feeder.start()
        for line in p.stdout:
            if re.match(rb'^\s*[0-9]+:', line):
                unknown += 1
        feeder.join()
        if p.wait() != 0:
            print(f'FAIL: protoc could not decode bytes {start}..{i}')
            return 1
        start = i
    print(f'{packets} packets, {len(data)} bytes decoded by protoc; {unknown} fields the schema does not know')
    return 1 if unknown else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--schema-only', metavar='FILE')
    ap.add_argument('--report')
    ap.add_argument('--proto', required=True)
    ap.add_argument('--max-ratio', type=float, help='fail when protobuf bytes / JSON bytes exceeds this')
    ap.add_argument('inputs', nargs='*')
    a = ap.parse_args()
    if a.schema_only:
        return schema_only(a.proto, a.schema_only)
    if not a.report or not a.inputs:
        ap.error('--report and at least one input are required')
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        js, pb = os.path.join(tmp, 't.json'), os.path.join(tmp, 't.pftrace')
        for out in (js, pb):
            r = subprocess.run([a.report, 'timeline', '-o', out] + a.inputs, capture_output=True, text=True)
            if r.returncode != 0:
                print(f'gprof-report timeline -o {out} failed: {r.stderr}')
                return 1
        proto_dir, proto_file = os.path.split(os.path.abspath(a.proto))
        with open(pb, 'rb') as f:
            r = subprocess.run(['protoc', '--decode=perfetto.protos.Trace', '-I', proto_dir, proto_file], stdin=f,
                               capture_output=True)
        if r.returncode != 0:
            print('protoc could not decode the protobuf: ' + r.stderr.decode(errors='replace'))
            return 1
        text = r.stdout.decode('utf-8', 'replace')
        unknown = re.findall(r'^\s*[0-9]+:', text, re.M)
        if unknown:
            failures.append(f'{len(unknown)} fields the schema does not know (wrong number or wire type), e.g. {unknown[0]}')
        with open(js) as f:
            doc = json.load(f)
        sizes = os.path.getsize(pb), os.path.getsize(js)
    trace = parse_text_format(text)
    c = Checker()
    for i, p in enumerate(trace.get('packet', [])):
        c.packet(i, p)
    c.finish()
    failures += c.errors
    to_real = lambda ts: ts - (c.boot_ref or 0) + (c.real_ref or 0)
    j_slices, j_instants, j_counters, j_flows = json_events(doc)
    p_slices = [(n, to_real(s), d) for n, s, d in c.slices]
    for what, jv, pv in (('slices', j_slices, p_slices),
                         ('instants', j_instants, [(n, to_real(t)) for n, t in c.instants]),
                         ('counter samples', j_counters, [(to_real(t), v) for _, t, v in c.counters])):
        jc, pc = collections.Counter(jv), collections.Counter(pv)
        if jc != pc:
            failures.append(f'{what}: JSON {len(jv)}, protobuf {len(pv)}; only in JSON e.g. {list((jc - pc).items())[:2]}, '
                            f'only in protobuf e.g. {list((pc - jc).items())[:2]}')
    if j_flows != len(c.flow_closed):
        failures.append(f'flows: JSON {j_flows}, protobuf {len(c.flow_closed)}')
    if not j_slices:
        failures.append('the JSON timeline has no slice: nothing was compared')
    ratio = sizes[0] / sizes[1]
    if a.max_ratio and ratio > a.max_ratio:
        failures.append(f'protobuf is {ratio:.3f} of the JSON (more than {a.max_ratio})')
    for f in failures:
        print('FAIL: ' + f)
    print(f'{len(c.slices)} slices, {len(c.instants)} instants, {len(c.counters)} counter samples, '
          f'{len(c.flow_closed)} flows, {len(c.tracks)} tracks, {len(c.seq)} sequences; '
          f'protobuf {sizes[0]} bytes = {ratio:.3f} of the JSON ({sizes[1]} bytes)')
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
