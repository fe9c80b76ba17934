# cmake -DPTX=file.ptx -DNAME=name -DOUTPUT=file.cc -P EmbedPtx.cmake: writes a
# C++ file defining cumpi::memory::<name>_ptx(), which returns the PTX text.
file(READ "${PTX}" text)
file(WRITE "${OUTPUT}" "// Generated from ${PTX} by cmake/EmbedPtx.cmake.\n"
  "#include \"memory/${NAME}_ptx.h\"\n\nnamespace cumpi::memory {\n"
  "const char* ${NAME}_ptx() {\n  return R\"cumpi_ptx(${text})cumpi_ptx\";\n}\n"
  "}  // namespace cumpi::memory\n")
