# Writes a C++ file that maps each generation's file name (without .textproto) to its text;
# topologies/generations.cc makes the presets of them.
file(GLOB files ${DIR}/*.textproto)
list(SORT files)
set(body "#include <map>\n#include <string>\nnamespace tpusim::topologies {\nconst std::map<std::string, std::string>& EmbeddedGenerations() {\n  static const std::map<std::string, std::string> presets = {\n")
foreach(f ${files})
  get_filename_component(name ${f} NAME_WE)
  file(READ ${f} text)
  string(APPEND body "    {\"${name}\", R\"tpusim_preset(${text})tpusim_preset\"},\n")
endforeach()
string(APPEND body "  };\n  return presets;\n}\n}  // namespace tpusim::topologies\n")
file(WRITE ${OUT} "${body}")
