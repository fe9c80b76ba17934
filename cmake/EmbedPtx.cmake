# cmake -DPTX=file.ptx -DOUTPUT=file.cc -P EmbedPtx.cmake: writes a C++ file
# defining cumpi::memory::copy_kernel_ptx(), which returns the PTX text.
file(READ "${PTX}" text)
file(WRITE "${OUTPUT}" "// Generated from ${PTX} by cmake/EmbedPtx.cmake.\n"
  "#include \"memory/copy_kernel_ptx.h\"\n\nnamespace cumpi::memory {\n"
  "const char* copy_kernel_ptx() {\n  return R\"cumpi_ptx(${text})cumpi_ptx\";\n}\n"
  "}  // namespace cumpi::memory\n")
