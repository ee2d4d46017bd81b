#!/usr/bin/env python3
"""Lists the enumerators that have no documentation in Doxygen's XML output.

Doxygen before 1.9.7 does not warn about an undocumented enumerator (an enum
value) even with WARN_IF_UNDOCUMENTED, so tools/scripts/api-reference.sh runs
this over the XML it asks Doxygen for. Prints one line per undocumented
enumerator, "FILE:LINE: warning: ...", in Doxygen's own warning format.

    api-reference-enums.py XML_DIR    exit 0: all documented, 1: some are not
"""
import sys
import xml.etree.ElementTree as ET
from pathlib import Path


def has_text(element):
    return element is not None and "".join(element.itertext()).strip() != ""


def main():
    xml_dir = Path(sys.argv[1])
    found = set()
    for path in sorted(xml_dir.glob("*.xml")):
        if path.name == "index.xml":
            continue
        root = ET.parse(path).getroot()
        for enum in root.iter("memberdef"):
            if enum.get("kind") != "enum":
                continue
            scope = enum.findtext("qualifiedname") or enum.findtext("name")
            for value in enum.findall("enumvalue"):
                if has_text(value.find("briefdescription")) or has_text(
                    value.find("detaileddescription")
                ):
                    continue
                location = enum.find("location")
                where = path.name
                if location is not None:
                    file = location.get("file")
                    # Relative to include/ (Doxyfile's STRIP_FROM_PATH).
                    if not file.startswith("/"):
                        file = "include/" + file
                    where = f"{file}:{location.get('line')}"
                found.add(
                    f"{where}: warning: enumerator {value.findtext('name')} of "
                    f"{scope} is not documented."
                )
    for line in sorted(found):
        print(line)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
