"""How Scripts/fixtures/export_blockers.py reads `anvil convert`'s blockers and writes its
report, on made-up messages in the converter's formats (one blocker; several, with the count of
nodes left unchecked; a plain error): no anvil needed."""

import export_blockers


MANY = """anvil: 3 blockers (every one this run found):
  node '/model.22/Reshape' (Reshape): reshaping [1, 64, None, None] to [1, 4, 16, -1]: a Reshape of a tensor whose size depends on the open input size is not supported; pass --input-shape C,H,W
  node '/model.22/Reshape_1' (Reshape): reshaping [1, 64, None, None] to [1, 4, 16, -1]: a Reshape of a tensor whose size depends on the open input size is not supported; pass --input-shape C,H,W
  input 'images' has open channels [None, None, None, None]; pass --input-shape C,H,W
  (12 later nodes read only what these could not produce and were not checked)
"""


def test_parse_many_blockers():
    parsed = export_blockers.parse_failure(MANY)
    assert parsed["unchecked"] == 12
    assert [b[0] for b in parsed["blockers"]] == ["Reshape", "Reshape", "-"]
    assert parsed["blockers"][0][2] == "/model.22/Reshape"
    assert export_blockers.operator_counts(parsed["blockers"]) == [("Reshape", 2), ("-", 1)]


def test_parse_one_blocker_and_a_plain_error():
    one = ("anvil: node 'n1' (GridSample): this operator is not supported by the Anvil converter "
           "(see docs/converters.md) (1 later node read only what this could not produce and was not checked)\n")
    parsed = export_blockers.parse_failure(one)
    assert parsed == {"blockers": [("GridSample", "this operator is not supported by the Anvil converter "
                                    "(see docs/converters.md)", "n1")], "unchecked": 1}
    plain = export_blockers.parse_failure("anvil: cannot read 'x.onnx': no such file\n")
    assert plain == {"blockers": [("-", "cannot read 'x.onnx': no such file", "")], "unchecked": 0}


def test_general_reason_leaves_out_shapes_and_names():
    reason = "reshaping [1, 64, None, None] to [1, 4, 16, -1]: input 'images' is open"
    assert export_blockers.general_reason(reason) == "reshaping […] to […]: input '…' is open"
    assert export_blockers.general_reason("axis 1 (Anvil's layout is [1, 2])") == "axis 1 (Anvil's layout is […])"


def test_markdown_lists_rows_and_reasons():
    rows = [{"model": "a", "input": "batch,3,224,224", "converts": True, "blockers": [], "unchecked": 0},
            {"model": "b", "input": "1,3,320,320 (fixed)", "converts": False, "unchecked": 2,
             "blockers": [("Reshape", "reshaping [1] to [2]", "r1"), ("Reshape", "reshaping [3] to [4]", "r2")]}]
    text = export_blockers.markdown(rows, ["# title"])
    assert "1 of 2 conversions succeed." in text
    assert "| b | 1,3,320,320 (fixed) | no | 2 (+2 unchecked) | Reshape ×2 |" in text
    assert "- **Reshape** (1): reshaping […] to […] — b" in text
